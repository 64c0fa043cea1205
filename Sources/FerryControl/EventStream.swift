import FerryCore
import FerryDaemon
import FerrySystem
import Foundation

/// `/v1/events`: Server-Sent Events. Each run event (the objects `--json` prints) and
/// daemon event (`run_started`, `run_ended`, `paused`, `resumed`, `reload`) carries its
/// number as `id:`; a client that reconnects with `Last-Event-ID` gets what it missed (a
/// `reset` event first when too much was missed to replay). A `status` event (no id: it is
/// a snapshot, not history) carries `/v1/status` at once and whenever it changes, at most
/// once a second, which is what the status page draws from.
///
/// The stream lives as long as the process, not the runtime it started on: across a reload
/// the status comes from whichever runtime runs. A client that does not keep up is cut off
/// once `bufferedFrames` frames wait for it, and catches up by reconnecting with its last id,
/// so a stalled reader costs the daemon a bounded amount of memory.
struct EventStream: Sendable {
    let events: DaemonEventLog
    let slot: DaemonControlSlot
    let api: ControlAPI

    static let bufferedFrames = 256

    func response(lastEventId: String?) -> APIResponse {
        let lastId = lastEventId.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let (missed, entries) = events.subscribe(after: lastId)
        let (output, sink) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingOldest(Self.bufferedFrames))
        /// False once the client is cut off for falling behind.
        @Sendable func send(_ frame: [UInt8]) -> Bool {
            if case .dropped = sink.yield(frame) {
                sink.finish()
                return false
            }
            return true
        }
        let api = self.api, slot = self.slot, clock = slot.clock
        let forwarder = Task {
            _ = send(Array("retry: 2000\n\n".utf8))
            if missed { _ = send(Self.frame(id: nil, name: "reset", data: "{}")) }
            // The status first (what the missed or coming events apply to), then the events
            // as they come, and the status again whenever it changes.
            let first = await Self.status(slot: slot, api: api)
            if let first { _ = send(Self.frame(id: nil, name: "status", data: first)) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await entry in entries {
                        guard send(Self.frame(id: entry.id, name: entry.name, data: entry.json)) else { return }
                    }
                }
                group.addTask {
                    var last = first
                    var quiet = 0
                    while !Task.isCancelled {
                        await clock.sleep(for: 1.0)
                        let status = await Self.status(slot: slot, api: api)
                        if let status, status != last {
                            guard send(Self.frame(id: nil, name: "status", data: status)) else { return }
                            last = status
                            quiet = 0
                        } else {
                            quiet += 1
                            // A comment now and then keeps proxies and idle timeouts from closing the stream.
                            if quiet % 15 == 0, !send(Array(": keep-alive\n\n".utf8)) { return }
                        }
                    }
                }
                // Whichever ends first (the log closed, the client cut off) ends the stream.
                await group.next()
                group.cancelAll()
            }
            sink.finish()
        }
        sink.onTermination = { _ in forwarder.cancel() }
        return APIResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
                                                  ("X-Accel-Buffering", "no")],
                           body: .stream(output))
    }

    /// `/v1/status` from the runtime that runs now; nil while a reload is between runtimes.
    static func status(slot: DaemonControlSlot, api: ControlAPI) async -> String? {
        guard let control = slot.now else { return nil }
        return await ControlAPI(control: control, metrics: api.metrics, version: api.version, rates: api.rates, slot: slot)
            .statusObject().text
    }

    static func frame(id: Int?, name: String, data: String) -> [UInt8] {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\ndata: \(data)\n\n"
        return Array(text.utf8)
    }
}
