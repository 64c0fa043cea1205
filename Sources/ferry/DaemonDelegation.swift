import FerryControl
import FerryCore
import FerryPluginAPI
import Foundation

/// `ferry push FOLDER` (pull, sync) while a daemon on the same state folder owns FOLDER:
/// instead of waiting for the pair's lock, it asks the daemon to run the folder and follows
/// the run's events, printing them as a run of its own would (JSON lines with `--json`).
enum DaemonDelegation {
    /// Runs `folder` through the daemon when one serves this state folder and has it in its
    /// config (same local folder); returns false when there is none, so the caller runs it.
    static func runIfOwned(folder: String, mode: SyncMode, context: CommandContext, transfer: TransferOptions,
                           mirror: Bool, json: Bool, verbose: Bool) async throws -> Bool {
        // Flags that change the run itself cannot be handed over: such a run waits for the lock.
        // `--now` too: the daemon would wait for the folder's run conditions.
        guard !transfer.dryRun, !transfer.now, transfer.transfers == nil, transfer.bwlimit == nil, !mirror,
              transfer.maxDelete == nil, !transfer.forceDelete,
              let configured = context.config.folder(named: folder) else { return false }
        let client = ControlClient(stateDirectory: context.stateDirectory)
        guard await client.isServed() else { return false }
        let (code, owned) = try await client.request("GET", "/v1/folders/" + Self.escape(folder))
        guard code == 200, owned["local"] as? String == configured.localPath else { return false }
        if owned["paused"] as? Bool == true {
            throw CommandFailure.runtime("\(folder) is paused in the running daemon; resume it from its status page or with POST /v1/folders/\(folder)/resume")
        }

        var skipRuns = 0
        var asked = false
        var started = false
        var summary: [String: Any]?
        for try await event in client.events() {
            let object = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any]) ?? [:]
            if !asked {
                // The stream is open (its first event is the status): now ask, so no event is missed.
                guard event.name == "status" else { continue }
                let folders = object["folders"] as? [[String: Any]] ?? []
                if folders.first(where: { $0["name"] as? String == folder })?["state"] as? String == "running" {
                    skipRuns = 1 // the run under way ends first; ours is the one after it
                }
                let (status, answer) = try await client.request("POST", "/v1/folders/\(Self.escape(folder))/run",
                                                               body: ["mode": mode.rawValue])
                guard status == 202 else {
                    throw CommandFailure.runtime("the daemon did not take the run: \(answer["error"] as? String ?? "HTTP \(status)")")
                }
                asked = true
                if !json {
                    let pid = (object["daemon"] as? [String: Any])?["pid"] as? Int
                    StandardStreams.error("\(folder) belongs to the running daemon\(pid.map { " (pid \($0))" } ?? ""); it runs it now, following")
                }
                continue
            }
            guard object["folder"] as? String == folder else { continue }
            switch event.name {
            case "run_started":
                if skipRuns == 0 { started = true }
            case "run_ended":
                if skipRuns > 0 {
                    skipRuns -= 1
                    continue
                }
                guard started else { continue }
                if let error = object["error"] as? String { throw CommandFailure.runtime(error) }
                if !json, let summary {
                    let remote = configured.remotePath.isRoot ? configured.remote : configured.remote + ":" + configured.remotePath.string
                    StandardStreams.output(Self.summaryLine(summary, mode: mode,
                                                            destination: "\(folder) \(PairLabel.arrow(mode)) \(remote)"))
                }
                let failed = (summary?["failed"] as? Int ?? 0) + (summary?["conflicts"] as? Int ?? 0)
                if failed > 0 { throw ExitCodeFailure.someFilesFailed }
                return true
            default:
                guard started, skipRuns == 0 else { continue }
                if event.name == "summary" { summary = object }
                if json {
                    StandardStreams.output(event.json)
                } else if let line = Self.line(event.name, object, verbose: verbose) {
                    StandardStreams.output(line)
                }
            }
        }
        throw CommandFailure.runtime("the daemon stopped before the run ended; run the same command again")
    }

    static func line(_ name: String, _ object: [String: Any], verbose: Bool) -> String? {
        let path = object["path"] as? String ?? ""
        switch name {
        case "transferred" where verbose:
            return "\(object["direction"] as? String == "download" ? "downloaded" : "uploaded") \(path)"
        case "failed": return "failed \(path): \(object["error"] as? String ?? "")"
        case "conflict": return "conflict \(path): \(object["reason"] as? String ?? "")"
        case "deleted" where verbose: return "deleted \(path)"
        default: return nil
        }
    }

    /// `destination`: the folder and its remote (`photos → nas:photos`).
    static func summaryLine(_ summary: [String: Any], mode: SyncMode, destination: String) -> String {
        let up = summary["uploaded"] as? Int ?? 0, down = summary["downloaded"] as? Int ?? 0
        let bytes = Int64(summary["uploaded_bytes"] as? Int ?? 0) + Int64(summary["downloaded_bytes"] as? Int ?? 0)
        var parts: [String] = []
        if mode != .pull || up > 0 { parts.append("\(Plural.count(up, "file")) uploaded") }
        if mode != .push || down > 0 { parts.append("\(Plural.count(down, "file")) downloaded") }
        if let failed = summary["failed"] as? Int, failed > 0 { parts.append("\(failed) failed") }
        if let conflicts = summary["conflicts"] as? Int, conflicts > 0 { parts.append("\(conflicts) in conflict") }
        return "\(mode.rawValue) \(destination): " + parts.joined(separator: ", ") + " (\(ByteFormat.string(bytes))), by the daemon"
    }

    static func escape(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? name
    }
}
