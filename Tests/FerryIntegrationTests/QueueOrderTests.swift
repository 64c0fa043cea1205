import FerryTestSupport
import Foundation
import Testing

@Suite("queue priority end to end", .integration)
struct QueueOrderTests {
    @Test("with --transfers 1, every thumbnail completes before any media, media before gpx, gpx before archives")
    func strictPriority() async throws {
        let work = Workspace()
        var expected: [String: String] = [:]
        // Interleaved names, so that path order alone would mix the queues.
        for index in 0..<12 {
            let stem = String(format: "%02d", index)
            let files = [
                ("\(stem)/IMG_\(stem).jpg", "media"),
                ("\(stem)/.thumbnails/IMG_\(stem).jpg", "thumbnails"),
                ("\(stem)/track_\(stem).gpx", "gpx"),
                ("\(stem)/bundle_\(stem).zip", "archives"),
                ("\(stem)/VID_\(stem).MP4", "media"),
                ("\(stem)/IMG_\(stem).xmp", "gpx"),
            ]
            for (offset, (path, queue)) in files.enumerated() {
                try TreeGenerator.write(at: work.source + "/" + path, size: 2048 + offset, seed: UInt64(index * 10 + offset))
                expected[path] = queue
            }
        }
        let run = try await work.push(["--transfers", "1"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let order = ["thumbnails", "media", "gpx", "archives"]
        let completed = run.events(named: "transferred").compactMap { event -> (String, String)? in
            guard let path = event["path"] as? String, let queue = event["queue"] as? String else { return nil }
            return (path, queue)
        }
        #expect(completed.count == expected.count)
        for (path, queue) in completed { #expect(expected[path] == queue, "\(path) went to \(queue)") }
        let ranks = completed.map { order.firstIndex(of: $0.1) ?? 99 }
        #expect(ranks == ranks.sorted(), "completion order by queue: \(completed.map(\.1))")
    }
}
