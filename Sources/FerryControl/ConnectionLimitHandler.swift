import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// A listener's connections, shared by their handlers: the roster decides, this closes.
final class ConnectionGate: Sendable {
    private struct State {
        var roster: ConnectionRoster
        var channels: [Int: any Channel] = [:]
    }

    private let state: Mutex<State>

    init(capacity: Int) {
        state = Mutex(State(roster: ConnectionRoster(capacity: capacity)))
    }

    /// The connection's id, or nil when it was refused (and closed).
    func admit(_ channel: any Channel) -> Int? {
        let (id, evicted) = state.withLock { state -> (Int?, (any Channel)?) in
            guard case let .admitted(id, evicting) = state.roster.admit() else { return (nil, nil) }
            state.channels[id] = channel
            return (id, evicting.flatMap { state.channels.removeValue(forKey: $0) })
        }
        evicted?.close(promise: nil)
        if id == nil { channel.close(promise: nil) }
        return id
    }

    func busy(_ id: Int) { state.withLock { $0.roster.busy(id) } }
    func waiting(_ id: Int) { state.withLock { $0.roster.waiting(id) } }

    func remove(_ id: Int) {
        state.withLock { state in
            state.roster.remove(id)
            state.channels[id] = nil
        }
    }

    var count: Int { state.withLock { $0.roster.count } }
}

/// Sits after the HTTP decoder on every connection: registers it with the listener's gate
/// (which may close an idle one to make room), tells the gate when a request starts and a
/// response ends, and answers a head over the limit with 431 instead of the generic 400.
final class ConnectionLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let gate: ConnectionGate
    private let headLimit: Int
    private var id: Int?
    private var admitted = false

    init(gate: ConnectionGate, headLimit: Int) {
        self.gate = gate
        self.headLimit = headLimit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !admitted else { return }
        admitted = true
        id = gate.admit(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func release() {
        if let id { gate.remove(id) }
        id = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), let id { gate.busy(id) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), let id { gate.waiting(id) }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow else {
            context.fireErrorCaught(error)
            return
        }
        // The decoder stopped at the limit and drops the rest: answer and close, at the
        // cost of the bytes read so far.
        let message = Array(#"{"error":"the request's line and header fields are over \#(headLimit / 1024) KiB together"}"#.utf8)
        var head = HTTPResponse(status: .requestHeaderFieldsTooLarge)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = "\(message.count)"
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: message))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        let channel = context.channel
        done.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}
