import FerrySystem
import Testing

@testable import FerryCore
import FerryDaemon

/// The numbered events behind `/v1/events`: replay after an id, the missed flag, the bound.
@Suite("Daemon event log")
struct DaemonEventLogTests {
    static func event(_ name: String) -> JSONObject {
        var object = JSONObject()
        object.add("event", name)
        return object
    }

    @Test("a subscriber after id N gets N+1 onwards, then what comes next")
    func replayThenLive() async {
        let log = DaemonEventLog(capacity: 10, clock: SystemClock())
        for index in 1...3 { log.publish(name: "e\(index)", object: Self.event("e\(index)")) }
        let (missed, stream) = log.subscribe(after: 1)
        #expect(!missed)
        log.publish(.transferred(path: "a.jpg", queue: "media", direction: .upload, bytes: 5, resumedFrom: 0), folder: "photos")
        log.close()
        var seen: [DaemonEventLog.Entry] = []
        for await entry in stream { seen.append(entry) }
        #expect(seen.map(\.id) == [2, 3, 4])
        #expect(seen.last?.name == "transferred")
        #expect(seen.last?.json == #"{"event":"transferred","direction":"upload","path":"a.jpg","queue":"media","bytes":5,"resumed_from":0,"folder":"photos"}"#)
    }

    @Test("events let go of are reported as missed; so is an id from the future")
    func missed() {
        let log = DaemonEventLog(capacity: 3, clock: SystemClock())
        for index in 1...6 { log.publish(name: "e", object: Self.event("e\(index)")) }
        #expect(log.subscribe(after: 3).missed == false) // 4, 5, 6 are kept
        #expect(log.subscribe(after: 2).missed == true)  // 3 is gone
        #expect(log.subscribe(after: 99).missed == true)
        #expect(log.subscribe(after: nil).missed == false)
        #expect(log.nextId == 7)
    }

    @Test("a long poll returns what is kept after the id, or nothing once the wait is over")
    func longPoll() async {
        let log = DaemonEventLog(clock: SystemClock())
        log.publish(name: "a", object: Self.event("a"))
        #expect(await log.entries(after: 0, wait: .zero).map(\.id) == [1])
        #expect(await log.entries(after: 1, wait: .zero).isEmpty)
    }
}

/// A subscriber that does not keep up is ended, never skipped silently.
@Suite("Daemon event log, slow subscribers")
struct DaemonEventLogBackpressureTests {
    @Test("a subscriber `capacity` events behind is ended with what it had; others go on")
    func fallenBehind() async {
        let log = DaemonEventLog(capacity: 4, clock: SystemClock())
        let (_, slow) = log.subscribe(after: nil)
        let (_, keeping) = log.subscribe(after: nil)
        var keepingUp = keeping.makeAsyncIterator()
        for index in 1...6 {
            log.publish(name: "e\(index)", object: DaemonEventLogTests.event("e\(index)"))
            #expect(await keepingUp.next()?.id == index)
        }
        var seen: [Int] = []
        for await entry in slow { seen.append(entry.id) }
        #expect(seen == [1, 2, 3, 4])
        log.publish(name: "e7", object: DaemonEventLogTests.event("e7"))
        #expect(await keepingUp.next()?.id == 7)
    }
}
