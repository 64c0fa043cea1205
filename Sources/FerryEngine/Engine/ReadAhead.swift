/// One side of planning (the journal's rows, the local walk, the remote listing) read a
/// batch ahead: while a part is merged and planned, the next batch of each side is already
/// being read, on the journal's reader, a blocking thread or the network. On a no-op push
/// of 100,000 files the walk's `fstatat` calls and SQLite's row reads then share the two
/// cores with planning instead of taking turns.
///
/// At most one batch is in flight; `take` hands it over and starts the next one, unless it
/// was the last (shorter than `batchSize`). A read that failed fails the `take` that
/// wanted it, as a read made then would have.
package final class ReadAhead<Element: Sendable, Failure: Error> {
    /// Reads the batch after `last` (nil: the first batch).
    package typealias Read = @Sendable (_ last: Element?) async throws(Failure) -> [Element]

    package let batchSize: Int
    private let read: Read
    private var pending: Task<Result<[Element], Failure>, Never>?

    /// `read` nil: a side with nothing to read (no journal, no listing).
    package init(batchSize: Int, read: Read?) {
        self.batchSize = max(1, batchSize)
        self.read = read ?? { _ in [] }
        pending = read == nil ? nil : Self.start(read: self.read, after: nil)
    }

    deinit {
        pending?.cancel()
    }

    /// True once the last batch was taken.
    package var ended: Bool { pending == nil }

    /// Rows in flight, for the count of what planning holds.
    package var inFlight: Int { pending == nil ? 0 : batchSize }

    /// The next batch (empty once ended), with the one after it started.
    package func take() async throws(Failure) -> [Element] {
        guard let task = pending else { return [] }
        let batch = try await task.value.get()
        pending = batch.count < batchSize ? nil : Self.start(read: read, after: batch.last)
        return batch
    }

    private static func start(read: @escaping Read, after last: Element?) -> Task<Result<[Element], Failure>, Never> {
        Task {
            do throws(Failure) {
                return .success(try await read(last))
            } catch {
                return .failure(error)
            }
        }
    }
}
