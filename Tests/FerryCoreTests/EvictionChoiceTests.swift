import FerryConfig
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// Which files a folder over its cache budget evicts: pure values.
@Suite("cache budget: eviction choice")
struct EvictionChoiceTests {
    typealias C = EvictionChoice.Candidate

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var candidates: [C]
        var heldBytes: Int64
        var heldFiles: Int
        var limit: LocalLimit
        var evicted: [String]
        var stillOver: Bool

        var testDescription: String { name }
    }

    static let a = C(path: "a.jpg", size: 100, recency: 10)
    static let b = C(path: "b.jpg", size: 200, recency: 30)
    static let c = C(path: "c.jpg", size: 300, recency: 20)

    static let rows: [Row] = [
        Row(name: "within the budget: nothing goes", candidates: [a, b, c], heldBytes: 600, heldFiles: 3,
            limit: LocalLimit(maxBytes: 600), evicted: [], stillOver: false),
        Row(name: "over by bytes: oldest first until within", candidates: [a, b, c], heldBytes: 600, heldFiles: 3,
            limit: LocalLimit(maxBytes: 300), evicted: ["a.jpg", "c.jpg"], stillOver: false),
        Row(name: "over by one byte: one file goes", candidates: [a, b, c], heldBytes: 600, heldFiles: 3,
            limit: LocalLimit(maxBytes: 599), evicted: ["a.jpg"], stillOver: false),
        Row(name: "over by count", candidates: [a, b, c], heldBytes: 600, heldFiles: 3,
            limit: LocalLimit(maxFiles: 1), evicted: ["a.jpg", "c.jpg"], stillOver: false),
        Row(name: "both bounds: the tighter decides", candidates: [a, b, c], heldBytes: 600, heldFiles: 3,
            limit: LocalLimit(maxBytes: 10_000, maxFiles: 2), evicted: ["a.jpg"], stillOver: false),
        Row(name: "files that are not candidates count but never go", candidates: [b], heldBytes: 1_600, heldFiles: 5,
            limit: LocalLimit(maxBytes: 1_000), evicted: ["b.jpg"], stillOver: true),
        Row(name: "no candidates at all", candidates: [], heldBytes: 1_600, heldFiles: 5,
            limit: LocalLimit(maxFiles: 2), evicted: [], stillOver: true),
        Row(name: "equal recency: path order", candidates: [C(path: "y", size: 1, recency: 5), C(path: "x", size: 1, recency: 5)],
            heldBytes: 2, heldFiles: 2, limit: LocalLimit(maxFiles: 1), evicted: ["x"], stillOver: false),
    ]

    @Test("the least recent candidates go until the folder is within its budget", arguments: rows)
    func choose(_ row: Row) {
        let outcome = EvictionChoice.choose(candidates: row.candidates, heldBytes: row.heldBytes, heldFiles: row.heldFiles,
                                            limit: row.limit)
        #expect(outcome.evict.map(\.path) == row.evicted)
        #expect(outcome.stillOver == row.stillOver)
        #expect(outcome.bytesLeft == row.heldBytes - outcome.evict.reduce(0) { $0 + $1.size })
    }

    struct RecencyRow: Sendable, CustomTestStringConvertible {
        var name: String
        var order: LocalLimit.EvictionOrder
        var modified: Int64
        var accessed: Int64?
        var fetchedAt: Double?
        var recency: Int64

        var testDescription: String { name }
    }

    static let recencyRows: [RecencyRow] = [
        RecencyRow(name: "oldest: the modification time", order: .oldest, modified: 5_000_000_000, accessed: 9_000_000_000,
                   fetchedAt: nil, recency: 5_000_000_000),
        RecencyRow(name: "least recently used: the access time", order: .leastRecentlyUsed, modified: 5_000_000_000,
                   accessed: 9_000_000_000, fetchedAt: nil, recency: 9_000_000_000),
        RecencyRow(name: "least recently used without an access time: modified", order: .leastRecentlyUsed,
                   modified: 5_000_000_000, accessed: nil, fetchedAt: nil, recency: 5_000_000_000),
        RecencyRow(name: "fetched on demand counts from its fetch (oldest)", order: .oldest, modified: 5_000_000_000,
                   accessed: nil, fetchedAt: 100, recency: 100_000_000_000),
        RecencyRow(name: "fetched on demand counts from its fetch (least recently used)", order: .leastRecentlyUsed,
                   modified: 5_000_000_000, accessed: 7_000_000_000, fetchedAt: 100, recency: 100_000_000_000),
        RecencyRow(name: "a fetch older than a later change does not pull it back", order: .oldest,
                   modified: 500_000_000_000, accessed: nil, fetchedAt: 100, recency: 500_000_000_000),
    ]

    @Test("a file's place in the order", arguments: recencyRows)
    func recency(_ row: RecencyRow) {
        #expect(EvictionChoice.recency(order: row.order, modifiedNanos: row.modified, accessedNanos: row.accessed,
                                       fetchedAt: row.fetchedAt) == row.recency)
    }

    @Test("only in-sync files with a remote copy, outside kept queues, are candidates")
    func candidates() {
        let limit = LocalLimit(maxFiles: 1, keepQueues: ["thumbnails"])
        let local = LocalVersion(size: 10, modifiedNanos: 1, inode: 1)
        let remote = RemoteVersion(size: 10, modifiedNanos: 1, etag: nil)
        func record(_ status: FileStatus, queue: String = "media", remote hasRemote: Bool = true) -> FileRecord {
            var record = FileRecord(pairId: 1, path: "p", queue: queue, status: .inSync, updatedAt: 1)
            record.markInSync(local: local, remote: remote, at: 1)
            if !hasRemote { record.remote = nil }
            switch status {
            case .needsUpload: record.plan(.upload)
            case .localOnly: record.keepLocalOnly()
            case .conflict: record.markConflict(reason: "x")
            default: break
            }
            return record
        }
        #expect(EvictionChoice.isCandidate(record(.inSync), limit: limit))
        #expect(!EvictionChoice.isCandidate(record(.inSync, queue: "thumbnails"), limit: limit))
        #expect(!EvictionChoice.isCandidate(record(.inSync, remote: false), limit: limit), "not on the remote")
        #expect(!EvictionChoice.isCandidate(record(.needsUpload), limit: limit), "not yet on the remote")
        #expect(!EvictionChoice.isCandidate(record(.localOnly), limit: limit))
        #expect(!EvictionChoice.isCandidate(record(.conflict), limit: limit))
    }
}
