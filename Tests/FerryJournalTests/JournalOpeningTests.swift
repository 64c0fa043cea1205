@testable import FerryJournal
import FerryTestSupport
import Foundation
import Synchronization
import Testing


@Suite("opening a journal")
struct JournalOpeningTests {
    @Test("runs that open a new journal at the same moment all get it, with its tables made once")
    func concurrentFirstOpen() throws {
        for round in 0..<60 {
            let folder = TemporaryDirectory()
            let path = folder.child("state/journal.sqlite")
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                do {
                    _ = try Journal.open(at: path)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
        }
    }

    /// Ctrl-C during a push's first steps cancels the task that reads the journal. That is a
    /// stop, which the command reports as "stopped; N files left"; it used to print
    /// "journal …: CancellationError()" before it.
    @Test("a journal read in a cancelled task fails as a stop, not as a journal failure")
    func cancelledAccessIsAStop() async throws {
        let folder = TemporaryDirectory()
        let journal = try Journal.open(at: folder.child("state/journal.sqlite"))
        let access = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await journal.folderPairs()
        }
        do {
            _ = try await access.value
            Issue.record("the read went through in a cancelled task")
        } catch let error as JournalError {
            #expect(error.stopped)
            #expect(!error.description.contains("CancellationError"), "\(error)")
        }
        #expect(!JournalError(path: "journal.sqlite", message: "disk I/O error").stopped)
    }
}
