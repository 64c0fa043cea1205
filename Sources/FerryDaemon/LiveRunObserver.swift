import FerryCore
import FerryEngine

/// Told when a folder's run starts and ends in `ferry watch` or `ferry daemon`, with the
/// run's live progress: the command line puts a progress table on a terminal with it.
public protocol LiveRunObserver: Sendable {
    func runStarted(folder: String, mode: String, progress: RunProgress)
    func runEnded(folder: String)
}
