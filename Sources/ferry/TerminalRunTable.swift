import FerryCore
import FerryEngine
import FerryDaemon
import Synchronization

/// `ferry watch` and `ferry daemon` on a terminal: while a folder's run moves files, its
/// live table stands at the bottom and every line (per-file lines with -v, log lines)
/// scrolls above it, as for `ferry push`. One table at a time: the folder whose run
/// started first has it, and the others' runs show in their log lines until it ends.
final class TerminalRunTable: LiveRunObserver {
    private let shown = Mutex<(folder: String, display: ProgressDisplay)?>(nil)

    func runStarted(folder: String, mode: String, progress: RunProgress) {
        let display = ProgressDisplay(progress: progress, title: "\(mode) \(folder)")
        let taken = shown.withLock { current -> Bool in
            guard current == nil else { return false }
            current = (folder, display)
            return true
        }
        guard taken else { return }
        StandardStreams.showTable(display)
        display.start()
    }

    func runEnded(folder: String) {
        let ended = shown.withLock { current -> ProgressDisplay? in
            guard let showing = current, showing.folder == folder else { return nil }
            current = nil
            return showing.display
        }
        guard let ended else { return }
        StandardStreams.showTable(nil)
        ended.stop()
    }
}
