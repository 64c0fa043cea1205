import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

@Suite("walking a remote folder in the journal's order, a folder at a time")
struct RemoteTreeWalkTests {
    static func walk(_ backend: InMemoryBackend, top: RelativePath = .root, hints: Set<RelativePath> = [],
                     skipped: Set<RelativePath> = [], bounds: ListingBounds = .standard,
                     limit: Int) async throws -> (files: [String], clashes: [RemoteTreeWalk.Clash], batches: [Int]) {
        var walk = RemoteTreeWalk(top: top, hints: hints, skipped: skipped, bounds: bounds, waitToRetry: { _, _ in false })
        var files: [String] = []
        var clashes: [RemoteTreeWalk.Clash] = []
        var batches: [Int] = []
        // A walk that never finishes fails here instead of hanging the suite: no test tree
        // needs more calls than it has files and folders, and none has 10,000.
        while !walk.isFinished && batches.count < 10_000 {
            let batch = try await walk.next(limit: limit, from: backend)
            files += batch.files.map(\.path.string)
            clashes += batch.clashes
            batches.append(batch.files.count)
        }
        #expect(walk.isFinished, "the walk had not finished after \(batches.count) calls")
        return (files, clashes, batches)
    }

    static let names = ["a.txt", "a/x.jpg", "a/b/c.jpg", "a0.jpg", "a b/c.jpg", "a-b.jpg", "B.jpg", "é.jpg", "z/y/x.mp4",
                        ".hidden/h.jpg", "Z.jpg", "a/b.jpg", "ab/.c.jpg"]

    @Test("files come in the byte order of their paths, the same files a whole listing gives, never more than asked")
    func pathOrder() async throws {
        let backend = InMemoryBackend()
        for name in Self.names { backend.put(name, Data(name.utf8), modifiedNanos: 1) }
        let whole = try await backend.listTree(.root).map(\.path.string)
        for limit in [1, 3, 100] {
            let walked = try await Self.walk(backend, limit: limit)
            #expect(walked.files == Self.names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "limit \(limit)")
            #expect(Set(walked.files) == Set(whole))
            #expect(walked.batches.allSatisfy { $0 <= limit })
        }
    }

    @Test("a missing top folder is an empty tree; skipped folders are not entered; hints that do not exist are passed over")
    func topSkippedHints() async throws {
        let backend = InMemoryBackend()
        backend.put("photos/a.jpg", Data("a".utf8), modifiedNanos: 1)
        backend.put("photos/.ferry-trash/old.jpg", Data("o".utf8), modifiedNanos: 1)
        backend.put("photos/.thumbnails/a.jpg", Data("t".utf8), modifiedNanos: 1)
        #expect(try await Self.walk(backend, top: try RelativePath("nothing"), limit: 10).files == [])
        let photos = try RelativePath("photos")
        let walked = try await Self.walk(backend, top: photos,
                                         hints: [try RelativePath("photos/.thumbnails"), try RelativePath("photos/.gone")],
                                         skipped: [try RelativePath("photos/.ferry-trash")], limit: 10)
        // The hinted folder, listed anyway, appears once.
        #expect(walked.files == ["photos/.thumbnails/a.jpg", "photos/a.jpg"])
    }

    // Sibling names in two Unicode forms: InMemoryBackend keys its files by Swift strings,
    // which cannot hold both; HostileRemoteTests.remoteNormalizationClash pulls them from
    // nginx through this walk.

    @Test("the listing bounds hold as for a whole listing")
    func bounds() async throws {
        let backend = InMemoryBackend()
        for index in 0..<50 { backend.put("a/f\(index).txt", Data("x".utf8), modifiedNanos: 1) }
        #expect(try await Self.walk(backend, bounds: ListingBounds(maxDepth: 5, maxEntries: 51), limit: 7).files.count == 50)
        await #expect(throws: BackendError.self) {
            _ = try await Self.walk(backend, bounds: ListingBounds(maxDepth: 5, maxEntries: 50), limit: 7)
        }
    }
}
