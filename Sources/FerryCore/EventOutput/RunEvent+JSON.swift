import FerryEngine
/// A run's events as the JSON objects `--json` prints, one per line, and the control API's
/// event stream sends: one encoding for both.
extension RunEvent {
    /// The event's object; `folder` is added to every event but the summary (which names it).
    public func jsonObject(folder: String?) -> JSONObject {
        var object = JSONObject()
        switch self {
        case let .planned(path, queue, action, bytes):
            object.add("event", "planned")
            object.add("action", action.rawValue)
            object.add("path", path)
            object.add("queue", queue)
            object.add("bytes", bytes)
        case let .transferred(path, queue, direction, bytes, resumedFrom):
            object.add("event", "transferred")
            object.add("direction", direction == .download ? "download" : "upload")
            object.add("path", path)
            object.add("queue", queue)
            object.add("bytes", bytes)
            object.add("resumed_from", resumedFrom)
        case let .deleted(path, queue, side):
            object.add("event", "deleted")
            object.add("side", side == .deleteLocal ? "local" : "remote")
            object.add("path", path)
            object.add("queue", queue)
        case let .moved(path, queue, action, target):
            object.add("event", "moved")
            object.add("reason", action == .moveRemote ? "renamed" : "conflict")
            object.add("side", action == .keepBothLocalLoses ? "local" : "remote")
            object.add("path", path)
            object.add("target", target)
            object.add("queue", queue)
        case let .failed(path, queue, message, willRetry, attempt):
            object.add("event", willRetry ? "retrying" : "failed")
            object.add("path", path)
            object.add("queue", queue)
            object.add("error", message)
            object.add("attempt", attempt)
        case let .conflict(path, queue, message):
            object.add("event", "conflict")
            object.add("path", path)
            object.add("queue", queue)
            object.add("reason", message)
        case let .evicted(path, queue, bytes):
            object.add("event", "evicted")
            object.add("path", path)
            object.add("queue", queue)
            object.add("bytes", bytes)
        case let .skipped(path, reason):
            object.add("event", "skipped")
            object.add("path", path)
            object.add("reason", reason)
        case let .remoteOffline(remote, message, nextProbe):
            object.add("event", "remote_offline")
            object.add("remote", remote)
            object.add("error", message)
            object.add("next_probe_seconds", nextProbe)
        case let .remoteOnline(remote, seconds):
            object.add("event", "remote_online")
            object.add("remote", remote)
            object.add("offline_seconds", seconds)
        case let .waitingForWriteLease(remote, holder, maxWait):
            object.add("event", "waiting_for_lease")
            object.add("remote", remote)
            object.add("holder", holder)
            object.add("max_wait_seconds", maxWait)
        case let .summary(summary):
            object = Self.summaryObject(summary)
        }
        if case .summary = self {} else if let folder {
            object.add("folder", folder)
        }
        return object
    }

    public static func summaryObject(_ summary: RunSummary) -> JSONObject {
        var object = JSONObject()
        object.add("event", "summary")
        object.add("folder", summary.folder)
        object.add("mode", summary.mode.rawValue)
        object.add("dry_run", summary.dryRun)
        object.add("uploaded", summary.uploadedFiles)
        object.add("uploaded_bytes", summary.uploadedBytes)
        object.add("downloaded", summary.downloadedFiles)
        object.add("downloaded_bytes", summary.downloadedBytes)
        object.add("deleted", summary.deletedFiles)
        if summary.mode == .sync {
            object.add("trashed", summary.trashedFiles)
            object.add("renamed", summary.movedFiles)
            object.add("kept_both", summary.keptBothFiles)
            object.add("changed_meanwhile", summary.changedDuringRun)
        } else if summary.mode == .pull {
            object.add("kept_both", summary.keptBothFiles)
        }
        object.add("skipped", summary.skippedFiles)
        object.add("failed", summary.failedFiles)
        object.add("conflicts", summary.conflictFiles)
        object.add("resumed_bytes", summary.resumedBytes)
        if summary.evictedFiles > 0 {
            object.add("evicted", summary.evictedFiles)
            object.add("evicted_bytes", summary.evictedBytes)
        }
        if summary.leftRemoteFiles > 0 { object.add("left_remote", summary.leftRemoteFiles) }
        if let waiting = summary.waitingFor { object.add("waiting_for", waiting) }
        object.add("elapsed_seconds", summary.elapsedSeconds)
        object.add("failures", summary.failures.map { failure in
            var item = JSONObject()
            item.add("path", failure.path)
            item.add("error", failure.message)
            return item
        })
        object.add("incomplete", summary.incomplete)
        return object
    }
}
