import FerryCore
import FerryEngine
import Logging

/// A long-running process's run events as log lines: each file sent, failed or in
/// conflict, remotes going offline and back, and each run's summary.
struct LogEventSink: RunEventSink {
    let logger: Logger
    /// The folder's remote as configured (`nas:media`), for the summary line and, in place
    /// of `location` (the engine's name for it, `webdav:http://nas/dav/#media`), in messages.
    var remote: String?
    var location: String?
    /// The backend as a whole (`webdav:http://nas/dav/`) and the remote's name (`nas`).
    var backend: String?
    var remoteName: String?

    private func naming(_ text: String) -> String {
        guard let remote, let location, !location.isEmpty else { return text }
        let named = text.replacingOccurrences(of: location, with: remote)
        guard let backend, let remoteName, !backend.isEmpty, !remoteName.isEmpty else { return named }
        return named.replacingOccurrences(of: backend, with: remoteName)
    }

    func emit(_ event: RunEvent) {
        switch event {
        case .planned: break
        case let .transferred(path, queue, direction, bytes, resumedFrom):
            logger.info("\(direction == .download ? "downloaded" : "uploaded")", metadata: [
                "path": "\(path)", "queue": "\(queue)", "bytes": "\(bytes)", "resumed_from": "\(resumedFrom)",
            ])
        case let .deleted(path, _, side):
            logger.info("deleted", metadata: ["path": "\(path)", "side": "\(side == .deleteLocal ? "local" : "remote")"])
        case let .moved(path, _, action, target):
            logger.info("moved", metadata: [
                "path": "\(path)", "to": "\(target)", "reason": "\(action == .moveRemote ? "renamed" : "conflict")",
                "side": "\(action == .keepBothLocalLoses ? "local" : "remote")",
            ])
        case let .failed(path, queue, message, willRetry, attempt):
            logger.log(level: willRetry ? .info : .warning, willRetry ? "retrying" : "failed", metadata: [
                "path": "\(path)", "queue": "\(queue)", "error": "\(naming(message))", "attempt": "\(attempt)",
            ])
        case let .conflict(path, _, message):
            logger.warning("conflict", metadata: ["path": "\(path)", "reason": "\(message)"])
        case let .evicted(path, queue, bytes):
            logger.info("evicted", metadata: ["path": "\(path)", "queue": "\(queue)", "bytes": "\(bytes)"])
        case let .skipped(path, reason):
            logger.debug("skipped", metadata: ["path": "\(path)", "reason": "\(reason)"])
        case let .remoteOffline(remote, message, nextProbe):
            logger.warning("remote offline", metadata: ["remote": "\(naming(remote))", "error": "\(naming(message))",
                                                        "next_probe_seconds": "\(Int(nextProbe))"])
        case let .remoteOnline(remote, seconds):
            logger.notice("remote back online", metadata: ["remote": "\(naming(remote))", "offline_seconds": "\(Int(seconds))"])
        case let .waitingForWriteLease(remote, holder, maxWait):
            logger.notice("waiting for the write lease", metadata: ["remote": "\(naming(remote))", "holder": "\(holder ?? "")",
                                                                    "max_wait_seconds": "\(Int(maxWait))"])
        case let .summary(summary):
            guard summary.uploadedFiles + summary.downloadedFiles + summary.deletedFiles + summary.failedFiles
                + summary.conflictFiles > 0 else { return }
            logger.notice("\(TextEventPrinter.shortLine(summary, remote: remote))")
        }
    }
}
