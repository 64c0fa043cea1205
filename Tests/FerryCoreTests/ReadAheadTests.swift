import Testing

@testable import FerryCore
@testable import FerryEngine

@Suite("reading the next batch while the current one is used")
struct ReadAheadTests {
    struct Failed: Error, Equatable {
        let after: Int?
    }

    /// Numbers 0..<count in batches of `size`; each read says which batch it started after.
    static func numbers(count: Int, size: Int, failAfter: Int? = nil,
                        started: AsyncStream<Int?>.Continuation) -> ReadAhead<Int, Failed>.Read {
        { last throws(Failed) in
            started.yield(last)
            if let failAfter, last == failAfter { throw Failed(after: last) }
            let first = last.map { $0 + 1 } ?? 0
            return Array(first..<min(count, first + size))
        }
    }

    @Test("batches come in order, and the next read starts before it is asked for")
    func readsAhead() async throws {
        let (started, continuation) = AsyncStream<Int?>.makeStream()
        var reads = started.makeAsyncIterator()
        let batches = ReadAhead(batchSize: 4, read: Self.numbers(count: 10, size: 4, started: continuation))
        // The first read starts when the reader is made.
        #expect(await reads.next() == .some(nil))
        #expect(try await batches.take() == [0, 1, 2, 3])
        // The second starts without another take: the event itself, not a delay.
        #expect(await reads.next() == .some(3))
        #expect(!batches.ended)
        #expect(batches.inFlight == 4)
        #expect(try await batches.take() == [4, 5, 6, 7])
        #expect(await reads.next() == .some(7))
        // A short batch is the last: nothing more is read.
        #expect(try await batches.take() == [8, 9])
        #expect(batches.ended)
        #expect(batches.inFlight == 0)
        #expect(try await batches.take() == [])
        continuation.finish()
        #expect(await reads.next() == nil)
    }

    @Test("a full last batch is followed by one empty read")
    func exactMultiple() async throws {
        let (_, continuation) = AsyncStream<Int?>.makeStream()
        let batches = ReadAhead(batchSize: 5, read: Self.numbers(count: 10, size: 5, started: continuation))
        #expect(try await batches.take() == [0, 1, 2, 3, 4])
        #expect(try await batches.take() == [5, 6, 7, 8, 9])
        #expect(!batches.ended)
        #expect(try await batches.take() == [])
        #expect(batches.ended)
    }

    @Test("a read that failed fails the take that wants its batch, not an earlier one")
    func failureReachesItsTake() async throws {
        let (_, continuation) = AsyncStream<Int?>.makeStream()
        let batches = ReadAhead(batchSize: 3, read: Self.numbers(count: 100, size: 3, failAfter: 2, started: continuation))
        #expect(try await batches.take() == [0, 1, 2])
        await #expect(throws: Failed(after: 2)) { try await batches.take() }
    }

    @Test("nothing to read: ended from the start")
    func nothingToRead() async throws {
        let batches = ReadAhead<Int, Failed>(batchSize: 3, read: nil)
        #expect(batches.ended)
        #expect(try await batches.take() == [])
    }
}
