import FerryConfig
import FerryCore
import FerryDaemon
import FerryJournal
import FerryPlanning
import FerrySystem
import FerryPluginAPI
import Foundation

/// The API's resources and actions (docs/api.md, docs/openapi.yaml). JSON under `/v1`,
/// the event stream at `/v1/events`, Prometheus text at `/metrics`, the page at `/`.
/// Made for each request, on the runtime that runs then.
struct ControlAPI: Sendable {
    let control: DaemonControl
    let metrics: MetricsExporter
    let version: String
    /// The process's: rates are measured across requests.
    let rates: RateMeter
    /// For the event stream, which outlives the runtime it started on.
    let slot: DaemonControlSlot

    func respond(to request: APIRequest) async -> APIResponse {
        let segments = request.segments
        let method = request.method
        let query = request.query
        let headers = request.headers
        do {
            switch (method, segments) {
            case ("GET", []), ("GET", ["index.html"]):
                return APIResponse.text(StatusPage.html, contentType: "text/html; charset=utf-8")
            case ("GET", ["favicon.ico"]):
                return APIResponse(status: 204)
            case ("GET", ["metrics"]):
                return APIResponse.text(await metrics.exposition(control: control, api: self),
                                        contentType: "text/plain; version=0.0.4; charset=utf-8")
            case ("GET", ["v1", "status"]):
                return APIResponse.json(await statusObject())
            case ("GET", ["v1", "access"]):
                var object = JSONObject()
                object.add("role", request.role?.rawValue)
                object.add("key", request.keyName)
                object.add("actions", APIRole.control <= (request.role ?? .read))
                return APIResponse.json(object)
            case ("POST", ["v1", "reload"]):
                // The same as SIGHUP (systemctl reload): the config is read again, and this
                // connection, like every other, stays.
                CurrentProcess.askToReload()
                var object = JSONObject()
                object.add("accepted", true)
                return APIResponse.json(object, status: 202)
            case ("GET", ["v1", "folders"]):
                var object = JSONObject()
                object.add("folders", await folderObjects())
                return APIResponse.json(object)
            case ("GET", _) where segments.count == 3 && segments[0] == "v1" && segments[1] == "folders":
                let name = segments[2]
                _ = try control.folder(name)
                guard let folder = await folderObjects(only: name).first else { throw ControlError(.notFound, "no folder named '\(name)'") }
                return APIResponse.json(folder)
            case ("GET", ["v1", "schedules"]):
                var object = JSONObject()
                object.add("schedules", await control.snapshot().schedules.map(Self.scheduleObject))
                return APIResponse.json(object)
            case ("GET", ["v1", "files"]):
                return APIResponse.json(try await files(query))
            case ("GET", ["v1", "items"]):
                return APIResponse.json(try await items(query))
            case ("GET", ["v1", "history"]):
                return APIResponse.json(try await history(query))
            case ("GET", ["v1", "history", "transfers"]):
                return APIResponse.json(try await hourlyTransfers(query))
            case ("GET", ["v1", "events", "batch"]):
                return APIResponse.json(try await eventBatch(query))
            case ("GET", ["v1", "events"]):
                return EventStream(events: control.events, slot: slot, api: self).response(lastEventId: headers["last-event-id"])
            case ("POST", ["v1", "pause"]):
                try await control.pause(nil)
                return APIResponse.json(await statusObject())
            case ("POST", ["v1", "resume"]):
                try await control.resume(nil)
                return APIResponse.json(await statusObject())
            case ("POST", _) where segments.count == 4 && segments[0] == "v1" && segments[1] == "folders":
                return try await act(segments[3], folder: segments[2], body: try Self.body(request))
            default:
                if Self.knows(segments) {
                    var response = APIResponse.error(405, "\(method) is not allowed on \(request.path)")
                    let posts = segments.count == 4 || [["v1", "pause"], ["v1", "resume"], ["v1", "reload"]].contains(segments)
                    response.headers.append(("Allow", posts ? "POST" : "GET"))
                    return response
                }
                return APIResponse.error(404, "no such resource: \(request.path); see docs/api.md")
            }
        } catch let error as ControlError {
            switch error.kind {
            case .notFound: return APIResponse.error(404, error.message)
            case .invalid: return APIResponse.error(400, error.message)
            case .unavailable: return APIResponse.error(503, error.message)
            case .conflict: return APIResponse.error(409, error.message)
            }
        } catch {
            return APIResponse.error(400, "\(error)")
        }
    }

    private static func knows(_ segments: [String]) -> Bool {
        switch segments {
        case [], ["index.html"], ["metrics"], ["v1", "status"], ["v1", "folders"], ["v1", "schedules"], ["v1", "files"],
             ["v1", "items"], ["v1", "history"], ["v1", "history", "transfers"], ["v1", "events"], ["v1", "events", "batch"], ["v1", "pause"], ["v1", "resume"],
             ["v1", "access"], ["v1", "reload"]:
            return true
        default:
            guard segments.count >= 3, segments[0] == "v1", segments[1] == "folders" else { return false }
            return segments.count == 3
                || segments.count == 4 && ["run", "pause", "resume", "rescan", "retry", "resolve", "accept-changes"].contains(segments[3])
        }
    }

    // MARK: Actions

    private func act(_ action: String, folder name: String, body: [String: Any]) async throws -> APIResponse {
        _ = try control.folder(name)
        var object = JSONObject()
        object.add("folder", name)
        switch action {
        case "run":
            var mode: SyncMode?
            if let text = body["mode"] {
                guard let text = text as? String, let parsed = SyncMode(rawValue: text) else {
                    throw ControlError(.invalid, "mode must be push, pull or sync")
                }
                mode = parsed
            }
            var acceptsChanges = false
            if let value = body["accept_changes"] {
                // JSON numbers bridge to Bool too; only `true` and `false` are booleans here.
                guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else {
                    throw ControlError(.invalid, "accept_changes must be true or false")
                }
                let flag = number.boolValue
                acceptsChanges = flag
            }
            try await control.run(name, mode: mode, acceptsChanges: acceptsChanges)
            object.add("accepted", true)
            let folderMode = try control.folder(name).mode
            object.add("mode", (mode ?? folderMode).rawValue)
            return APIResponse.json(object, status: 202)
        case "rescan":
            try await control.run(name, reason: "api: rescan")
            object.add("accepted", true)
            return APIResponse.json(object, status: 202)
        case "pause":
            try await control.pause(name)
            return APIResponse.json(await folderObjects(only: name).first ?? object)
        case "resume":
            try await control.resume(name)
            return APIResponse.json(await folderObjects(only: name).first ?? object)
        case "accept-changes":
            try await control.acceptChanges(name)
            object.add("accepted", true)
            return APIResponse.json(object, status: 202)
        case "retry":
            var paths: [String]?
            if let value = body["paths"] {
                guard let list = value as? [String] else { throw ControlError(.invalid, "paths must be a list of paths in the folder") }
                paths = list
            }
            let reset = try await control.retry(name, paths: paths)
            object.add("retried", reset)
            return APIResponse.json(object)
        case "resolve":
            guard let path = body["path"] as? String else { throw ControlError(.invalid, "give the conflict's path in the folder") }
            guard let keepText = body["keep"] as? String, let keep = Self.keep(keepText) else {
                throw ControlError(.invalid, "keep must be local, remote or both")
            }
            let resolved = try await control.resolve(name, path: path, keep: keep)
            guard !resolved.isEmpty else { throw ControlError(.notFound, "no conflict at \(path) in \(name)") }
            object.add("keep", keepText)
            object.add("resolved", resolved)
            return APIResponse.json(object)
        default:
            throw ControlError(.notFound, "no action \(action); actions: run, pause, resume, rescan, retry, resolve, accept-changes")
        }
    }

    static func keep(_ text: String) -> ConflictPolicy? {
        switch text {
        case "local": .local
        case "remote": .remote
        case "both": .keepBoth
        default: nil
        }
    }

    /// A POST's JSON object (an empty body is an empty object).
    static func body(_ request: APIRequest) throws -> [String: Any] {
        guard !request.body.isEmpty else { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw ControlError(.invalid, "the body must be a JSON object")
        }
        return object
    }

    // MARK: Status

    func statusObject() async -> JSONObject {
        let snapshot = await control.snapshot()
        var daemon = JSONObject()
        daemon.add("pid", Int(snapshot.pid))
        daemon.add("command", snapshot.command)
        daemon.add("started_at", Self.time(snapshot.startedAt))
        daemon.add("version", version)
        daemon.add("paused", !control.config.folders.isEmpty && control.config.folders.allSatisfy { control.isPaused($0.name) })
        if let items = snapshot.filesPendingItems { daemon.add("files_pending_items", items) } else { daemon.add("files_pending_items", nil as String?) }
        var object = JSONObject()
        object.add("daemon", daemon)
        object.add("folders", await folderObjects(snapshot: snapshot))
        object.add("schedules", snapshot.schedules.map(Self.scheduleObject))
        object.add("offline_remotes", snapshot.offlineRemotes.map { remote in
            var item = JSONObject()
            item.add("remote", remote.remote)
            item.add("since", Self.time(remote.since))
            item.add("message", remote.message)
            return item
        })
        return object
    }

    func folderObjects(only: String? = nil, snapshot given: DaemonSnapshot? = nil) async -> [JSONObject] {
        let snapshot: DaemonSnapshot
        if let given { snapshot = given } else { snapshot = await control.snapshot() }
        let now = control.clock.wallTime()
        var objects: [JSONObject] = []
        for folder in control.config.folders where only == nil || folder.name == only {
            let live = snapshot.folders.first { $0.name == folder.name }
            let offline = live?.remote.flatMap { remote in snapshot.offlineRemotes.first { $0.remote == remote } }
            let paused = control.isPaused(folder.name)
            var object = JSONObject()
            object.add("name", folder.name)
            object.add("mode", folder.mode.rawValue)
            object.add("local", folder.localPath)
            object.add("remote", folder.remotePath.isRoot ? folder.remote : folder.remote + ":" + folder.remotePath.string)
            let running = live?.state == "running"
            object.add("state", paused ? "paused" : offline != nil ? "offline" : running ? "running" : "idle")
            object.add("paused", paused)
            let pause = control.pause(of: folder.name)
            object.add("paused_since", pause.map { Self.time(Date(timeIntervalSince1970: $0.since)) })
            object.add("paused_reason", pause?.reason)
            object.add("offline", offline != nil)
            object.add("offline_since", offline.map { Self.time($0.since) })
            object.add("offline_message", offline?.message)
            // Run conditions (`when:`) that do not hold; null when none holds the folder back.
            object.add("waiting_for", live?.waitingFor)
            // A run held before its first write (too much would change); null when not held.
            if let hold = live?.hold { object.add("hold", Self.holdObject(hold)) } else { object.add("hold", nil as String?) }
            object.add("reason", running ? live?.reason : nil)
            object.add("run_started_at", running ? live?.runStartedAt.map(Self.time) : nil)
            object.add("last_run_ended_at", live?.lastRunEndedAt.map(Self.time))
            object.add("last_error", live?.lastError)
            object.add("unsettled_files", live?.unsettledFiles ?? 0)
            let queues = running ? (live?.queues ?? []) : []
            let bytesDone = queues.reduce(Int64(0)) { $0 + $1.bytesDone }
            let bytesLeft = queues.reduce(Int64(0)) { $0 + max(0, $1.bytesTotal - $1.bytesDone) }
            let rate = running ? rates.rate(folder: folder.name, bytesDone: bytesDone, at: now) : nil
            if !running { rates.forget(folder: folder.name) }
            object.add("rate_bytes_per_second", rate.map { $0.rounded() } ?? 0)
            if let rate, rate > 0, bytesLeft > 0 {
                object.add("eta_seconds", (Double(bytesLeft) / rate).rounded())
            } else {
                object.add("eta_seconds", nil as String?)
            }
            let order = control.config.queues.map(\.name)
            object.add("queues", queues.sorted { (order.firstIndex(of: $0.queue) ?? 99) < (order.firstIndex(of: $1.queue) ?? 99) }
                .map(Self.queueObject))
            let (counts, failed, conflicts) = await countsObject(folder)
            object.add("counts", counts)
            object.add("failed_files", failed)
            object.add("conflict_files", conflicts)
            objects.append(object)
        }
        return objects
    }

    static func holdObject(_ hold: DaemonSnapshot.HoldState) -> JSONObject {
        var held = JSONObject()
        held.add("reason", hold.reason)
        held.add("message", hold.message)
        held.add("since", time(hold.since))
        return held
    }

    static func queueObject(_ queue: DaemonSnapshot.QueueState) -> JSONObject {
        var item = JSONObject()
        item.add("queue", queue.queue)
        item.add("files_total", queue.filesTotal)
        item.add("files_done", queue.filesDone)
        item.add("files_failed", queue.filesFailed)
        item.add("files_left", max(0, queue.filesTotal - queue.filesDone - queue.filesFailed))
        item.add("bytes_total", queue.bytesTotal)
        item.add("bytes_done", queue.bytesDone)
        item.add("bytes_left", max(0, queue.bytesTotal - queue.bytesDone))
        item.add("active", queue.active)
        item.add("current", queue.current ?? [])
        return item
    }

    /// Files and bytes per status from the journal (empty when the folder never ran), and
    /// how many failed or are in conflict.
    private func countsObject(_ folder: FolderConfig) async -> (counts: JSONObject, failed: Int, conflicts: Int) {
        var counts = JSONObject()
        guard let (service, pair) = try? await control.recordedPair(folder),
              let totals = try? await service.totals(of: pair) else { return (counts, 0, 0) }
        for status in FileStatus.allCases {
            guard let total = totals.byStatus[status] else { continue }
            var entry = JSONObject()
            entry.add("files", total.files)
            entry.add("bytes", total.bytes)
            counts.add(status.rawValue, entry)
        }
        return (counts, totals.failedFiles, totals.conflictedFiles)
    }

    static func scheduleObject(_ schedule: DaemonSnapshot.ScheduleState) -> JSONObject {
        var item = JSONObject()
        item.add("action", schedule.action)
        item.add("trigger", schedule.trigger)
        item.add("next", schedule.next.map(time))
        item.add("last_run", schedule.lastRun.map(time))
        return item
    }

    // MARK: Files and items

    private func pageSize(_ query: [String: String]) throws -> Int {
        guard let text = query["limit"] else { return 100 }
        guard let limit = Int(text), (1...1000).contains(limit) else { throw ControlError(.invalid, "limit must be 1 to 1000") }
        return limit
    }

    private func files(_ query: [String: String]) async throws -> JSONObject {
        guard let name = query["folder"] else { throw ControlError(.invalid, "give folder=NAME") }
        let folder = try control.folder(name)
        let limit = try pageSize(query)
        let statusText = query["status"]
        if let statusText, statusText != "filesPending", FileStatus(rawValue: statusText) == nil {
            throw ControlError(.invalid, "status must be one of \((FileStatus.allCases.map(\.rawValue) + ["filesPending"]).joined(separator: ", "))")
        }
        let prefix = query["prefix"], after = query["after"]
        var object = JSONObject()
        guard let (service, pair) = try? await control.recordedPair(folder), let pairId = pair.id else {
            object.add("files", [JSONObject]())
            object.add("next", nil as String?)
            return object
        }
        var rows: [(record: FileRecord, item: String?)] = []
        do {
            if statusText == "filesPending" {
                let all = try await service.journal.records(pairId: pairId)
                let items = FolderService.items(of: all, by: control.config.items)
                var itemOf: [String: String] = [:]
                for item in items where item.status == .filesPending {
                    for file in item.files { itemOf[file.path] = item.key }
                }
                rows = all.filter { record in
                    itemOf[record.path] != nil && record.path > (after ?? "") && (prefix.map { record.path.hasPrefix($0) } ?? true)
                }.prefix(limit + 1).map { ($0, itemOf[$0.path]) }
            } else {
                rows = try await service.journal.records(pairId: pairId, statuses: statusText.flatMap(FileStatus.init(rawValue:)).map { [$0] },
                                                 prefix: prefix, after: after, limit: limit + 1).map { ($0, nil) }
            }
        } catch {
            throw ControlError(.unavailable, "\(error)")
        }
        // One row more than asked tells whether another page follows.
        let more = rows.count > limit
        rows = Array(rows.prefix(limit))
        object.add("files", rows.map { row in
            var item = JSONObject()
            item.add("path", row.record.path)
            item.add("queue", row.record.queue)
            item.add("status", row.record.status.rawValue)
            item.add("bytes", row.record.localSize ?? row.record.remoteSize ?? 0)
            item.add("attempts", row.record.attempts)
            item.add("error", row.record.lastError)
            item.add("updated_at", Self.time(Date(timeIntervalSince1970: row.record.updatedAt)))
            if let key = row.item { item.add("item", key) }
            return item
        })
        object.add("next", more ? rows.last?.record.path : nil)
        return object
    }

    private func items(_ query: [String: String]) async throws -> JSONObject {
        guard let name = query["folder"] else { throw ControlError(.invalid, "give folder=NAME") }
        let folder = try control.folder(name)
        let limit = try pageSize(query)
        let status = try query["status"].map { text -> MediaItemStatus in
            guard let status = MediaItemStatus(rawValue: text) else {
                throw ControlError(.invalid, "status must be one of \(MediaItemStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return status
        }
        var object = JSONObject()
        var page: [MediaItem] = []
        if let (service, pair) = try? await control.recordedPair(folder) {
            let all: [MediaItem]
            do { all = try await service.items(of: pair, by: control.config.items) } catch { throw ControlError(.unavailable, error.description) }
            page = Array(all
                .filter { (status == nil || $0.status == status) && $0.key > (query["after"] ?? "") }
                .sorted { $0.key < $1.key }
                .prefix(limit + 1))
        }
        let more = page.count > limit
        page = Array(page.prefix(limit))
        object.add("items", page.map { item in
            var entry = JSONObject()
            entry.add("key", item.key)
            entry.add("status", item.status.rawValue)
            entry.add("bytes", item.bytes)
            entry.add("files", item.files.map { file in
                var row = JSONObject()
                row.add("path", file.path)
                row.add("status", file.status.rawValue)
                row.add("bytes", file.bytes)
                return row
            })
            return entry
        })
        object.add("next", more ? page.last?.key : nil)
        return object
    }

    // MARK: Events, long-polled

    /// `GET /v1/events/batch?after=ID&wait=SECONDS`: the stream's events after `after` as
    /// one JSON answer, waiting up to `wait` (at most 25 s) for the first; without `after`,
    /// none, and the id to start from.
    private func eventBatch(_ query: [String: String]) async throws -> JSONObject {
        var wait = 0
        if let text = query["wait"] {
            guard let value = Int(text), (0...25).contains(value) else { throw ControlError(.invalid, "wait must be 0 to 25 seconds") }
            wait = value
        }
        var object = JSONObject()
        guard let text = query["after"] else {
            object.add("events", [JSONObject]())
            object.add("last_id", control.events.nextId - 1)
            return object
        }
        guard let after = Int(text), after >= 0 else { throw ControlError(.invalid, "after must be an event id (0 or more)") }
        let entries = await control.events.entries(after: after, wait: .seconds(wait))
        object.add("events", entries.map { entry in
            var item = JSONObject()
            item.add("id", entry.id)
            item.add("name", entry.name)
            item.add("data", json: entry.json)
            return item
        })
        object.add("last_id", entries.last?.id ?? after)
        return object
    }

    // MARK: History

    private func history(_ query: [String: String]) async throws -> JSONObject {
        let limit = try pageSize(query)
        if let name = query["folder"] { _ = try control.folder(name) }
        var object = JSONObject()
        let runs: [RunRecord]
        do {
            runs = try await control.state.existingHistory()?.runs(folder: query["folder"], limit: limit) ?? []
        } catch { throw ControlError(.unavailable, "\(error)") }
        object.add("runs", runs.map(\.jsonObject))
        return object
    }

    private func hourlyTransfers(_ query: [String: String]) async throws -> JSONObject {
        var hours = 24
        if let text = query["hours"] {
            guard let value = Int(text), (1...720).contains(value) else { throw ControlError(.invalid, "hours must be 1 to 720") }
            hours = value
        }
        let now = control.clock.wallTime()
        let since = (now / 3600).rounded(.down) * 3600 - Double(hours - 1) * 3600
        let rows: [HourlyTransfers]
        do {
            rows = try await control.state.existingHistory()?.hourlyTransfers(since: since) ?? []
        } catch { throw ControlError(.unavailable, "\(error)") }
        var object = JSONObject()
        object.add("hours", (0..<hours).map { index in
            let hour = since + Double(index) * 3600
            var entry = JSONObject()
            entry.add("hour", Self.time(Date(timeIntervalSince1970: hour)))
            let matching = rows.filter { $0.hour == hour }
            entry.add("files", matching.reduce(0) { $0 + $1.files })
            entry.add("bytes_up", matching.filter { $0.direction == "upload" }.reduce(Int64(0)) { $0 + $1.bytes })
            entry.add("bytes_down", matching.filter { $0.direction == "download" }.reduce(Int64(0)) { $0 + $1.bytes })
            return entry
        })
        return object
    }

    static func time(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
