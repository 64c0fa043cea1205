import FerryCore
import FlyingFox
import FlyingSocks
import Foundation

/// `/v1/events`: Server-Sent Events. Each run event (the objects `--json` prints) and
/// daemon event (`run_started`, `run_ended`, `paused`, `resumed`) carries its number as
/// `id:`; a client that reconnects with `Last-Event-ID` gets what it missed (a `reset`
/// event first when too much was missed to replay). A `status` event (no id: it is a
/// snapshot, not history) carries `/v1/status` at once and whenever it changes, at most
/// once a second, which is what the status page draws from.
struct EventStream: Sendable {
    let control: DaemonControl
    let api: ControlAPI

    func response(lastEventId: String?) -> HTTPResponse {
        let lastId = lastEventId.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let (missed, events) = control.events.subscribe(after: lastId)
        let (output, sink) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        let api = self.api
        // The status first (what the missed or coming events apply to), then the events as
        // they come; the status again whenever it changes, at most once a second.
        let forwarder = Task {
            sink.yield(Array("retry: 2000\n\n".utf8))
            if missed { sink.yield(Self.frame(id: nil, name: "reset", data: "{}")) }
            let first = await api.statusObject().text
            sink.yield(Self.frame(id: nil, name: "status", data: first))
            let ticker = Task {
                var last = first
                var quiet = 0
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let status = await api.statusObject().text
                    if status != last {
                        sink.yield(Self.frame(id: nil, name: "status", data: status))
                        last = status
                        quiet = 0
                    } else {
                        quiet += 1
                        // A comment now and then keeps proxies and idle timeouts from closing the stream.
                        if quiet % 15 == 0 { sink.yield(Array(": keep-alive\n\n".utf8)) }
                    }
                }
            }
            await withTaskCancellationHandler {
                for await entry in events {
                    sink.yield(Self.frame(id: entry.id, name: entry.name, data: entry.json))
                }
            } onCancel: {
                ticker.cancel()
            }
            ticker.cancel()
            sink.finish()
        }
        sink.onTermination = { _ in forwarder.cancel() }
        return HTTPResponse(statusCode: .ok,
                            headers: [.contentType: "text/event-stream", .cacheControl: "no-store",
                                      HTTPHeader("X-Accel-Buffering"): "no"],
                            body: HTTPBodySequence(from: ChunkStream(chunks: output)))
    }

    static func frame(id: Int?, name: String, data: String) -> [UInt8] {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\ndata: \(data)\n\n"
        return Array(text.utf8)
    }
}

/// An `AsyncStream` of byte chunks as the buffered byte sequence FlyingFox sends a body
/// from: each chunk goes out as it comes (chunked transfer encoding).
struct ChunkStream: AsyncBufferedSequence, Sendable {
    typealias Element = UInt8
    let chunks: AsyncStream<[UInt8]>

    func makeAsyncIterator() -> Iterator {
        Iterator(chunks: chunks.makeAsyncIterator())
    }

    struct Iterator: AsyncBufferedIteratorProtocol {
        var chunks: AsyncStream<[UInt8]>.AsyncIterator
        var pending: ArraySlice<UInt8> = []

        mutating func next() async -> UInt8? {
            if pending.isEmpty {
                guard let chunk = await chunks.next() else { return nil }
                pending = chunk[...]
            }
            return pending.popFirst()
        }

        mutating func nextBuffer(suggested count: Int) async -> ArraySlice<UInt8>? {
            while pending.isEmpty {
                guard let chunk = await chunks.next() else { return nil }
                pending = chunk[...]
            }
            let taken = pending.prefix(Swift.max(1, count))
            pending = pending.dropFirst(taken.count)
            return taken
        }
    }
}
