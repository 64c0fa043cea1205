/// What one client may cost the daemon. A request's head (request line and header fields)
/// is refused with 431 past `head`, a body with 413 past `body`; a connection that sends no
/// complete request for `idle` is closed, which also ends half-sent heads; a body must
/// arrive within `bodyTime`. Each listener holds at most `connections` (ConnectionRoster).
struct ControlLimits: Sendable {
    var head = 16 * 1024
    var headerFields = 100
    var body = 64 * 1024
    var idle: Duration = .seconds(30)
    var bodyTime: Duration = .seconds(30)
    var connections = 256

    static let standard = ControlLimits()
}
