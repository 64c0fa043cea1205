import FerryEngine
import FerryJournal

/// SQLite's `quick_check` of the journal, run beside the scan and planning rather than
/// before them: it reads every page, a tenth of a second per 100,000 files that a no-op
/// push would otherwise wait for. Its answer is awaited before anything is transferred,
/// and before any other error of the run is reported (a damaged page may fail a read
/// first), so a damaged journal still stops the run with the message that says what to
/// do, and never steers a transfer.
struct JournalCheck: Sendable {
    private let task: Task<Result<[String], JournalError>, Never>
    private let path: String

    init(journal: Journal, path: String) {
        self.path = path
        task = Task { await Self.problems(of: journal) }
    }

    /// The run's error when the journal is damaged or cannot be checked; nil when sound.
    func failure() async -> RunError? {
        switch await task.value {
        case let .success(problems):
            return problems.first.map {
                RunError(.journal, "the journal \(path) is damaged (\($0)); run ferry doctor, then move it aside and run again to rebuild it from both sides")
            }
        case let .failure(error):
            return RunError(.journal, error.description, cause: .journal(error))
        }
    }

    /// Stops waiting for an answer no one will read (the run ended first).
    func cancel() {
        task.cancel()
    }

    private static func problems(of journal: Journal) async -> Result<[String], JournalError> {
        do throws(JournalError) {
            return .success(try await journal.integrityProblems(quick: true))
        } catch {
            return .failure(error)
        }
    }
}
