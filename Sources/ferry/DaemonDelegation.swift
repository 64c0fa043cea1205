import FerryControl
import FerryCore
import FerryPlanning
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

        /// Asks the daemon to run the folder; true when a run of it is under way (ours is
        /// the one after it).
        func ask() async throws -> Bool {
            let (_, now) = try await client.request("GET", "/v1/folders/" + Self.escape(folder))
            var body: [String: Any] = ["mode": mode.rawValue]
            if transfer.acceptChanges { body["accept_changes"] = true }
            let (status, answer) = try await client.request("POST", "/v1/folders/\(Self.escape(folder))/run", body: body)
            guard status == 202 else {
                throw CommandFailure.runtime("the daemon did not take the run: \(answer["error"] as? String ?? "HTTP \(status)")")
            }
            return now["state"] as? String == "running"
        }
        var follower = DelegatedRunFollower(folder: folder)
        for try await event in client.events() {
            let object = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any]) ?? [:]
            switch follower.handle(event.name, object) {
            case .ignore:
                continue
            case let .ask(afterReload):
                follower.askedDaemon(whileRunning: try await ask())
                guard !json else { continue }
                if afterReload {
                    StandardStreams.error("the daemon reloaded its config; \(folder) runs again under it")
                } else {
                    let pid = (object["daemon"] as? [String: Any])?["pid"] as? Int
                    StandardStreams.error("\(folder) belongs to the running daemon\(pid.map { " (pid \($0))" } ?? ""); it runs it now, following")
                }
            case .show:
                if json {
                    StandardStreams.output(event.json)
                } else if let line = Self.line(event.name, object, verbose: verbose) {
                    StandardStreams.output(line)
                }
            case let .failed(message):
                throw CommandFailure.runtime(message)
            case .ended:
                let summary = follower.summary
                if !json, let summary {
                    let remote = configured.remotePath.isRoot ? configured.remote : configured.remote + ":" + configured.remotePath.string
                    StandardStreams.output(Self.summaryLine(summary, mode: mode,
                                                            destination: "\(folder) \(PairLabel.arrow(mode)) \(remote)"))
                }
                let failed = (summary?["failed"] as? Int ?? 0) + (summary?["conflicts"] as? Int ?? 0)
                if failed > 0 { throw ExitCodeFailure.someFilesFailed }
                return true
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
