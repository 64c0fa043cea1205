/// Which connections a listener holds, and which one goes when a new one would pass the
/// cap. Pure: the channel handler asks it and closes what it names.
///
/// A connection is either waiting for a request's head (just opened, half-sent, or idle
/// between keep-alive requests) or busy with a request (an event stream, a long poll).
/// At the cap, the connection that has waited longest for a head makes room: a flood of
/// idle or half-sent connections then never keeps a real request out, and busy ones (the
/// status page's stream) are never cut for it. Only when every connection is busy is the
/// new one refused.
struct ConnectionRoster: Sendable {
    enum Admission: Equatable, Sendable {
        /// Admitted; close `evicting` first when it is set.
        case admitted(id: Int, evicting: Int?)
        case refused
    }

    let capacity: Int
    private var nextId = 0
    /// Connection → the tick it started waiting for a head at; nil while busy.
    private var waitingSince: [Int: Int?] = [:]
    private var tick = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var count: Int { waitingSince.count }

    mutating func admit() -> Admission {
        var evicting: Int?
        if waitingSince.count >= capacity {
            let oldest = waitingSince.compactMap { id, since in since.map { (id, $0) } }.min { $0.1 < $1.1 }
            guard let oldest else { return .refused }
            waitingSince[oldest.0] = nil
            evicting = oldest.0
        }
        let id = nextId
        nextId += 1
        waitingSince[id] = .some(next())
        return .admitted(id: id, evicting: evicting)
    }

    /// A request's head arrived.
    mutating func busy(_ id: Int) {
        if waitingSince[id] != nil { waitingSince[id] = .some(nil) }
    }

    /// A response ended: the connection waits for the next request.
    mutating func waiting(_ id: Int) {
        if waitingSince[id] != nil { waitingSince[id] = .some(next()) }
    }

    mutating func remove(_ id: Int) {
        waitingSince[id] = nil
    }

    func isBusy(_ id: Int) -> Bool {
        waitingSince[id].map { $0 == nil } ?? false
    }

    private mutating func next() -> Int {
        tick += 1
        return tick
    }
}
