import FerryConfig
import Testing
@testable import FerryCore

/// Which new files a pull under a cache budget fetches, and which held files make room
/// first: pure values.
@Suite("cache budget: admission of new files")
struct CacheAdmissionTests {
    typealias C = EvictionChoice.Candidate

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var fixedBytes: Int64 = 0
        var fixedFiles = 0
        var held: [C] = []
        var incoming: [C]
        var limit: LocalLimit
        var leaveRemote: [String]
        var evictFirst: [String] = []

        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "an empty folder takes the newest that fit", incoming: [
                C(path: "old.jpg", size: 100, recency: 1), C(path: "mid.jpg", size: 100, recency: 2),
                C(path: "new.jpg", size: 100, recency: 3)],
            limit: LocalLimit(maxBytes: 250), leaveRemote: ["old.jpg"]),
        Row(name: "a file larger than what is left is passed over; a smaller older one still fits", incoming: [
                C(path: "small-old.jpg", size: 50, recency: 1), C(path: "big-mid.jpg", size: 300, recency: 2),
                C(path: "new.jpg", size: 100, recency: 3)],
            limit: LocalLimit(maxBytes: 200), leaveRemote: ["big-mid.jpg"]),
        Row(name: "newer arrivals push older held files out before they are fetched",
            held: [C(path: "held-old.jpg", size: 100, recency: 1), C(path: "held-new.jpg", size: 100, recency: 5)],
            incoming: [C(path: "arrived.jpg", size: 100, recency: 9)],
            limit: LocalLimit(maxBytes: 200), leaveRemote: [], evictFirst: ["held-old.jpg"]),
        Row(name: "older arrivals stay remote when newer held files fill the budget",
            held: [C(path: "held.jpg", size: 100, recency: 9)],
            incoming: [C(path: "old-arrival.jpg", size: 100, recency: 1)],
            limit: LocalLimit(maxBytes: 150), leaveRemote: ["old-arrival.jpg"]),
        Row(name: "what must stay local counts first", fixedBytes: 200, fixedFiles: 1,
            incoming: [C(path: "a.jpg", size: 100, recency: 1)],
            limit: LocalLimit(maxBytes: 250), leaveRemote: ["a.jpg"]),
        Row(name: "a file budget counts files", incoming: [
                C(path: "a.jpg", size: 1, recency: 1), C(path: "b.jpg", size: 1, recency: 2), C(path: "c.jpg", size: 1, recency: 3)],
            limit: LocalLimit(maxFiles: 2), leaveRemote: ["a.jpg"]),
        Row(name: "equal times go in path order", incoming: [
                C(path: "b.jpg", size: 100, recency: 1), C(path: "a.jpg", size: 100, recency: 1)],
            limit: LocalLimit(maxBytes: 100), leaveRemote: ["b.jpg"]),
    ]

    @Test(arguments: rows)
    func admission(_ row: Row) {
        let outcome = CacheAdmission.choose(fixedBytes: row.fixedBytes, fixedFiles: row.fixedFiles, held: row.held,
                                            incoming: row.incoming, limit: row.limit)
        #expect(outcome.leaveRemote == row.leaveRemote)
        #expect(outcome.evictFirst == row.evictFirst)
    }
}
