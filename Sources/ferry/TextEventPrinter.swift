import FerryCore
import FerryEngine
import FerryPlanning
import Synchronization

/// Plain text for people: failures and conflicts as they happen (stderr), the plan for
/// `--dry-run`, and a summary at the end (stdout). Each transferred file only with -v.
struct TextEventPrinter: RunEventSink {
    let verbose: Bool
    /// The live progress table, if one is showing: messages go above it, and it is taken
    /// down before the summary.
    var display: ProgressDisplay?
    /// Set when several folders run at once: each line then says whose it is.
    var folder: String?
    /// `--dry-run`: what the plan contains, for the closing "would upload …" line.
    let plan = PlanTally()
    /// Where the files went, for the summary: `photos → nas:photos`, `small → s3://ferry/x`
    /// (the folder and remote as the person named them); nil says the folder's name only.
    var destination: String?
    /// Puts the remote's name as the person wrote it into a message that has the engine's
    /// (`webdav:http://nas/dav/#phone` → `nas:phone`).
    var naming: @Sendable (String) -> String = { $0 }

    init(verbose: Bool, display: ProgressDisplay?, folder: String?, destination: String? = nil,
         naming: @escaping @Sendable (String) -> String = { $0 }) {
        self.verbose = verbose
        self.display = display
        self.folder = folder
        self.destination = destination
        self.naming = naming
    }

    private func report(_ line: String) {
        let line = folder.map { "\($0): " + line } ?? line
        if let display {
            display.interject(line)
        } else {
            StandardStreams.error(line)
        }
    }

    private func output(_ line: String) {
        let line = folder.map { "\($0): " + line } ?? line
        if let display {
            display.interject(line, toOutput: true)
        } else {
            StandardStreams.output(line)
        }
    }

    func emit(_ event: RunEvent) {
        switch event {
        case let .planned(path, queue, action, bytes):
            plan.add(action, bytes: bytes)
            // A size only for what moves bytes: a deletion or a rename sends nothing ("0 B" read as an empty file).
            let moves = action == .upload || action == .download
            StandardStreams.output("would \(Self.verb(action)) \(path)  [\(queue)" + (moves ? ", \(ByteFormat.string(bytes))]" : "]"))
        case let .transferred(path, queue, direction, bytes, resumedFrom):
            guard verbose else { return }
            let resumed = resumedFrom > 0 ? ", resumed at \(ByteFormat.string(resumedFrom))" : ""
            output("\(direction == .download ? "downloaded" : "uploaded") \(path)  [\(queue), \(ByteFormat.string(bytes))\(resumed)]")
        case let .deleted(path, _, side):
            output("deleted \(side == .deleteLocal ? "local" : "remote") \(path)")
        case let .moved(path, _, action, target):
            switch action {
            case .moveRemote: output("renamed remote \(path) → \(target)")
            default: report("conflict: \(path): kept both; the \(action == .keepBothLocalLoses ? "local" : "remote") version is now \(target)")
            }
        case let .failed(path, _, message, willRetry, attempt):
            if willRetry {
                if verbose { report("retrying \(path) (attempt \(attempt) failed): \(naming(message))") }
            } else {
                report("failed: \(path): \(naming(message))")
            }
        case let .conflict(path, _, message):
            report("conflict: \(path): \(message)")
        case let .evicted(path, _, bytes):
            if verbose { output("evicted \(path) (\(ByteFormat.string(bytes))); it stays on the remote") }
        case let .skipped(path, reason):
            if verbose { report("skipped \(path): \(reason)") }
        case let .remoteOffline(remote, message, nextProbe):
            display?.offline(nextCheck: nextProbe)
            report(naming("remote \(remote) is offline (\(message)); waiting for it, next check in \(String(format: "%.0f", nextProbe)) s"))
        case let .remoteOnline(remote, seconds):
            display?.offline(nextCheck: nil)
            report(naming("remote \(remote)") + " is back after \(String(format: "%.0f", seconds)) s offline; continuing")
        case let .waitingForWriteLease(remote, holder, maxWait):
            let who = holder.map { "another device (\($0))" } ?? "another device"
            report(naming("\(who) is writing to \(remote); waiting for its write lease (up to \(String(format: "%.0f", maxWait)) s)"))
        case let .summary(summary):
            display?.stop()
            for note in summary.incomplete { StandardStreams.error("ferry: \(naming(note))") }
            let line: String
            if let waiting = summary.waitingFor {
                line = "\(summary.mode.rawValue) \(summary.folder): \(waiting); nothing moved (--now runs it anyway)"
            } else if summary.dryRun {
                line = "\(summary.mode.rawValue) \(destination ?? summary.folder): dry run, nothing changed; \(plan.line(mode: summary.mode))"
            } else {
                line = Self.line(summary, destination: destination)
            }
            // On a terminal, broken between its parts rather than wrapped mid-word.
            let width = StandardStreams.outputIsTerminal ? TerminalSize.columns - 1 : nil
            for part in LineWrap.lines(line, width: width) { StandardStreams.output(part) }
        }
    }

    static func verb(_ action: FileAction) -> String {
        switch action {
        case .upload: return "upload"
        case .download: return "download"
        case .deleteRemote: return "delete remote"
        case .deleteLocal: return "delete local"
        case .moveRemote: return "rename remote"
        case .keepBothLocalLoses: return "keep both (rename local) of"
        case .keepBothRemoteLoses: return "keep both (rename remote) of"
        case .compareContent: return "compare the bytes of"
        }
    }

    /// Only what happened and where, for log lines (the folder is said by the line's prefix):
    /// "push → nas:media: 3 uploaded (146 KiB) in 0.4 s".
    static func shortLine(_ summary: RunSummary, remote: String? = nil) -> String {
        var parts: [String] = []
        if summary.uploadedFiles > 0 { parts.append("\(summary.uploadedFiles) uploaded (\(ByteFormat.string(summary.uploadedBytes)))") }
        if summary.downloadedFiles > 0 { parts.append("\(summary.downloadedFiles) downloaded (\(ByteFormat.string(summary.downloadedBytes)))") }
        if summary.deletedFiles > 0 { parts.append("\(summary.deletedFiles) deleted") }
        if summary.movedFiles > 0 { parts.append("\(summary.movedFiles) renamed") }
        if summary.conflictFiles > 0 { parts.append(Plural.count(summary.conflictFiles, "conflict")) }
        if summary.failedFiles > 0 { parts.append("\(summary.failedFiles) failed") }
        if summary.evictedFiles > 0 { parts.append("\(summary.evictedFiles) evicted (\(ByteFormat.string(summary.evictedBytes)))") }
        if summary.leftRemoteFiles > 0 { parts.append("\(summary.leftRemoteFiles) left on the remote (local_limit)") }
        let whereTo = remote.map { " \(PairLabel.arrow(summary.mode)) \($0)" } ?? ""
        return "\(summary.mode.rawValue)\(whereTo): " + (parts.isEmpty ? "nothing to do" : parts.joined(separator: ", "))
            + " in \(String(format: "%.1f", summary.elapsedSeconds)) s"
    }

    static func line(_ summary: RunSummary, destination: String? = nil) -> String {
        var parts: [String] = []
        if summary.uploadedFiles > 0 || summary.mode != .pull {
            parts.append("\(summary.uploadedFiles) uploaded (\(ByteFormat.string(summary.uploadedBytes)))")
        }
        if summary.downloadedFiles > 0 || summary.mode != .push {
            parts.append("\(summary.downloadedFiles) downloaded (\(ByteFormat.string(summary.downloadedBytes)))")
        }
        if summary.deletedFiles > 0 {
            parts.append("\(summary.deletedFiles) deleted" + (summary.trashedFiles > 0 ? " (\(summary.trashedFiles) into the trash)" : ""))
        }
        if summary.movedFiles > 0 { parts.append("\(summary.movedFiles) renamed") }
        if summary.keptBothFiles > 0 { parts.append(Plural.count(summary.keptBothFiles, "conflict") + " kept both") }
        if summary.changedDuringRun > 0 {
            parts.append("\(summary.changedDuringRun) changed on the remote meanwhile (decided again)")
        }
        parts.append("\(summary.skippedFiles) unchanged")
        if summary.resumedBytes > 0 { parts.append("\(ByteFormat.string(summary.resumedBytes)) resumed") }
        if summary.conflictFiles > 0 { parts.append("\(summary.conflictFiles) in conflict") }
        parts.append("\(summary.failedFiles) failed")
        if summary.evictedFiles > 0 {
            parts.append("\(summary.evictedFiles) evicted locally (\(ByteFormat.string(summary.evictedBytes)))")
        }
        if summary.leftRemoteFiles > 0 { parts.append("\(summary.leftRemoteFiles) left on the remote (local_limit)") }
        let prefix = summary.dryRun ? "dry run, nothing changed: " : ""
        return "\(summary.mode.rawValue) \(destination ?? summary.folder): \(prefix)\(parts.joined(separator: ", ")) in \(String(format: "%.1f", summary.elapsedSeconds)) s"
    }
}

/// Counts the jobs of a `--dry-run` plan by action: "would upload 15 files (161 MiB), delete 0".
final class PlanTally: Sendable {
    private let counts = Mutex<[FileAction: (files: Int, bytes: Int64)]>([:])

    func add(_ action: FileAction, bytes: Int64) {
        counts.withLock { counts in
            let old = counts[action] ?? (0, 0)
            counts[action] = (old.files + 1, old.bytes + bytes)
        }
    }

    func line(mode: SyncMode) -> String {
        let counts = self.counts.withLock { $0 }
        func files(_ action: FileAction, _ verb: String) -> String {
            let count = counts[action] ?? (0, 0)
            return "\(verb) \(Plural.count(count.files, "file"))" + (count.files > 0 ? " (\(ByteFormat.string(count.bytes)))" : "")
        }
        let deletes = (counts[.deleteRemote]?.files ?? 0) + (counts[.deleteLocal]?.files ?? 0)
        let renames = (counts[.moveRemote]?.files ?? 0) + (counts[.keepBothLocalLoses]?.files ?? 0)
            + (counts[.keepBothRemoteLoses]?.files ?? 0)
        var parts: [String] = []
        if mode != .pull || counts[.upload] != nil { parts.append(files(.upload, "upload")) }
        if mode != .push || counts[.download] != nil { parts.append(files(.download, "download")) }
        if renames > 0 { parts.append("rename \(renames)") }
        if let compare = counts[.compareContent] { parts.append("compare \(Plural.count(compare.files, "look-alike copy", plural: "look-alike copies"))") }
        parts.append("delete \(deletes)")
        return "would " + parts.joined(separator: ", ")
    }
}
