import FerryJournal
import Foundation

/// A run as `ferry status --history --json` and `GET /v1/history` show it.
extension RunRecord {
    public var jsonObject: JSONObject {
        let run = self
        var item = JSONObject()
        item.add("id", Int(run.id ?? 0))
        item.add("folder", run.folder)
        item.add("mode", run.mode)
        item.add("trigger", run.trigger.rawValue)
        item.add("started_at", Date(timeIntervalSince1970: run.startedAt).ISO8601Format())
        item.add("ended_at", Date(timeIntervalSince1970: run.endedAt).ISO8601Format())
        item.add("outcome", run.outcome)
        item.add("error", run.error)
        item.add("files", run.files)
        item.add("bytes", run.bytes)
        item.add("moved", run.moved.map { moved in
            var entry = JSONObject()
            entry.add("queue", moved.queue)
            entry.add("direction", moved.direction)
            entry.add("files", moved.files)
            entry.add("bytes", moved.bytes)
            return entry
        })
        item.add("conflicts", run.conflicts)
        var failures = JSONObject()
        failures.add("retried", run.retriedFailures)
        failures.add("permanent", run.permanentFailures)
        item.add("failures", failures)
        item.add("resumed_bytes", run.resumedBytes)
        item.add("offline_seconds", run.offlineSeconds)
        item.add("peak_bytes_per_second", run.peakBytesPerSecond.rounded())
        return item
    }
}
