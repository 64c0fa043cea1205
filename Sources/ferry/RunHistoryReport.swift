import FerryCore
import FerryJournal
import Foundation

/// `ferry status --history`: the last runs, newest first, one line each (or JSON).
enum RunHistoryReport {
    static func show(state: StateFolder, folder: String?, limit: Int, json: Bool) async throws {
        let runs: [RunRecord]
        do {
            runs = try await state.existingHistory()?.runs(folder: folder, limit: max(1, limit)) ?? []
        } catch {
            throw CommandFailure.runtime(error.message)
        }
        if json {
            var object = JSONObject()
            object.add("runs", runs.map(\.jsonObject))
            StandardStreams.output(object.text)
            return
        }
        guard !runs.isEmpty else {
            StandardStreams.output("no run recorded yet (the history is in \(state.historyPath))")
            return
        }
        for run in runs { StandardStreams.output(line(run)) }
    }

    static func line(_ run: RunRecord) -> String {
        let start = Date(timeIntervalSince1970: run.startedAt)
        // An ad-hoc pair by its local folder, never "ad-hoc" (every one would read the same).
        let folder = run.folder == "ad-hoc" ? run.localRoot : run.folder
        var parts = ["\(StatusWords.time(start))  \(folder) \(run.mode) (\(run.trigger.rawValue)): \(run.outcome)"]
        let up = run.moved.filter { $0.direction == "upload" }, down = run.moved.filter { $0.direction == "download" }
        if !up.isEmpty {
            parts.append("\(up.reduce(0) { $0 + $1.files }) up (\(ByteFormat.string(up.reduce(0) { $0 + $1.bytes })))")
        }
        if !down.isEmpty {
            parts.append("\(down.reduce(0) { $0 + $1.files }) down (\(ByteFormat.string(down.reduce(0) { $0 + $1.bytes })))")
        }
        // A --delete run (or a sync) deletes too; a deletion moves no bytes.
        let deletedRemote = run.moved.filter { $0.direction == "delete-remote" }.reduce(0) { $0 + $1.files }
        let deletedLocal = run.moved.filter { $0.direction == "delete-local" }.reduce(0) { $0 + $1.files }
        if deletedRemote > 0 { parts.append("\(deletedRemote) deleted on the remote") }
        if deletedLocal > 0 { parts.append("\(deletedLocal) deleted locally") }
        if run.files == 0 { parts.append("nothing moved") }
        if run.permanentFailures > 0 { parts.append("\(run.permanentFailures) failed") }
        if run.retriedFailures > 0 { parts.append("\(run.retriedFailures) retried") }
        if run.conflicts > 0 { parts.append("\(run.conflicts) conflicts") }
        if run.offlineSeconds >= 1 { parts.append("offline \(Int(run.offlineSeconds)) s") }
        if run.peakBytesPerSecond > 0 && run.bytes > 0 { parts.append("peak \(ByteFormat.string(Int64(run.peakBytesPerSecond)))/s") }
        parts.append(String(format: "%.1f s", run.endedAt - run.startedAt))
        if let error = run.error { parts.append(error) }
        return parts.joined(separator: ", ")
    }
}
