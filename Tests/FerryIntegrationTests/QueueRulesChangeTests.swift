import FerryTestSupport
import Foundation
import Testing

/// A no-op run classifies no unchanged file (the pair keeps the queue rules its rows were
/// classified by); a run under new rules classifies every file again, once.
@Suite("queue rules that change reclassify every file once", .integration)
struct QueueRulesChangeTests {
    static func config(_ work: Workspace, name: String, queues: String) throws -> String {
        let path = work.directory.child(name)
        try """
            remotes:
              here: {type: local, path: \(work.destination)}
            folders:
              photos: {path: \(work.source), remote: here, mode: push}
            \(queues)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Files per queue, all statuses together, from `ferry status --json`.
    static func filesPerQueue(_ work: Workspace, config: String) async throws -> [String: Int] {
        let status = try await work.ferry(["status", "photos", "--config", config, "--state", work.state, "--json"])
        #expect(status.status == 0, "\(status.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        let folder = try #require((object["folders"] as? [[String: Any]])?.first, "\(status.diagnostics)")
        let queues = try #require(folder["queues"] as? [String: [String: [String: Any]]], "\(status.diagnostics)")
        return queues.mapValues { statuses in statuses.values.reduce(0) { $0 + ($1["files"] as? Int ?? 0) } }
    }

    @Test("rows follow the rules after a change, and keep them on the no-op run after")
    func reclassifiedOnce() async throws {
        let work = Workspace()
        for index in 0..<6 {
            try TreeGenerator.write(at: work.source + "/d\(index % 2)/IMG_\(index).jpg", size: 100 + index, seed: UInt64(index))
        }
        try TreeGenerator.write(at: work.source + "/d0/track.gpx", size: 50, seed: 9)
        let standard = try Self.config(work, name: "standard.yml", queues: "")
        let first = try await work.ferry(["push", "photos", "--config", standard, "--state", work.state, "--json"])
        #expect(first.status == 0 && first.int("uploaded") == 7, "\(first.diagnostics)")
        #expect(try await Self.filesPerQueue(work, config: standard) == ["media": 6, "gpx": 1])

        let changed = try Self.config(work, name: "changed.yml", queues: """
            queues:
              - name: tracks
                match: ["*.gpx"]
              - name: photos
                match: ["d1/*.jpg"]
              - name: rest
                match: []
            default_queue: rest
            """)
        for _ in 0..<2 {
            let run = try await work.ferry(["push", "photos", "--config", changed, "--state", work.state, "--json"])
            #expect(run.status == 0 && run.int("uploaded") == 0, "\(run.diagnostics)")
            #expect(try await Self.filesPerQueue(work, config: changed) == ["tracks": 1, "photos": 3, "rest": 3])
        }

        // Back to the first rules, and one file changed meanwhile: every row follows again.
        try TreeGenerator.write(at: work.source + "/d1/IMG_1.jpg", size: 500, seed: 42)
        let back = try await work.ferry(["push", "photos", "--config", standard, "--state", work.state, "--json"])
        #expect(back.status == 0 && back.int("uploaded") == 1, "\(back.diagnostics)")
        #expect(try await Self.filesPerQueue(work, config: standard) == ["media": 6, "gpx": 1])
    }
}
