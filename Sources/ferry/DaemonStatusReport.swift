import FerryControl
import FerryCore
import FerryDaemon
import FerrySystem
import Foundation

/// The running daemon's (or watch's) live state in `ferry status`, from its
/// `daemon-status.json`: runs under way with per-queue progress, files waiting to settle,
/// the next schedule times, remotes offline.
struct DaemonStatusReport {
    var snapshot: DaemonSnapshot

    /// The live state from a daemon's control API (`GET /v1/status`), read into the same
    /// snapshot its status file has; nil when no daemon serves this state folder.
    static func fromAPI(stateDirectory: String) async -> DaemonStatusReport? {
        let client = ControlClient(stateDirectory: stateDirectory)
        guard await client.isServed(), let (code, status) = try? await client.request("GET", "/v1/status"), code == 200,
              let daemon = status["daemon"] as? [String: Any] else { return nil }
        // The API's status is a superset of the status file's shape: read it as one.
        var shape = daemon
        shape["updated_at"] = SystemClock().wallDate().ISO8601Format()
        shape["folders"] = status["folders"]
        shape["schedules"] = status["schedules"]
        shape["offline_remotes"] = status["offline_remotes"]
        guard let data = try? JSONSerialization.data(withJSONObject: shape),
              let snapshot = try? DaemonSnapshot.decode(data) else { return nil }
        return DaemonStatusReport(snapshot: snapshot)
    }

    var text: String {
        var lines = ["\(snapshot.command) running (pid \(snapshot.pid), since \(Self.time(snapshot.startedAt)))"]
        for folder in snapshot.folders {
            var line = "  \(folder.name) (\(folder.mode)): \(folder.paused == true ? "paused" : folder.state)"
            if folder.state == "running", let reason = folder.reason { line += " (\(reason))" }
            if folder.unsettledFiles > 0 { line += ", \(Plural.count(folder.unsettledFiles, "file")) settling" }
            if let hold = folder.hold {
                line += ", HELD since \(Self.time(hold.since)): \(hold.message)"
            } else if let error = folder.lastError {
                line += ", last run failed: \(error)"
            }
            lines.append(line)
            for queue in folder.queues where queue.filesTotal > 0 {
                lines.append("    " + queue.queue.padding(toLength: 12, withPad: " ", startingAt: 0)
                    + "\(queue.filesDone)/\(queue.filesTotal) files, "
                    + "\(ByteFormat.string(queue.bytesDone))/\(ByteFormat.string(queue.bytesTotal))"
                    + (queue.active > 0 ? ", \(queue.active) in flight" : "")
                    + (queue.filesFailed > 0 ? ", \(queue.filesFailed) failed" : ""))
            }
        }
        for schedule in snapshot.schedules {
            lines.append("  schedule \(schedule.trigger): \(schedule.action), next \(schedule.next.map(Self.time) ?? "never")")
        }
        for remote in snapshot.offlineRemotes {
            lines.append("  remote \(remote.remote) offline since \(Self.time(remote.since)): \(remote.message)")
        }
        if let items = snapshot.filesPendingItems {
            lines.append("  \(Plural.count(items, "media item")) partly sent")
        }
        return lines.joined(separator: "\n")
    }

    /// The snapshot as it is on disk (snake_case keys, ISO 8601 times).
    var jsonText: String {
        (try? snapshot.encoded()).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func time(_ date: Date) -> String {
        StatusWords.time(date)
    }
}
