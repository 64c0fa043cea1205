@testable import FerryJournal
import Testing
@testable import FerryCore
@testable import FerryEngine

@Suite("a run's error as a stop")
struct RunErrorStopTests {
    /// Ctrl-C during a push's first steps cancels the journal read (`JournalOpeningTests`):
    /// the command must say "stopped", not report a journal failure.
    @Test("a journal error that is a stop makes the run's error a stop; another journal failure does not")
    func journalStopIsAStop() {
        var stopped = JournalError(path: "journal.sqlite", message: "cancelled")
        stopped.stopped = true
        #expect(RunError(.journal, stopped.description, cause: .journal(stopped)).isStop)
        let failure = JournalError(path: "journal.sqlite", message: "disk I/O error")
        #expect(!RunError(.journal, failure.description, cause: .journal(failure)).isStop)
    }
}
