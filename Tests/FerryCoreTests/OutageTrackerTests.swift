import Testing

@testable import FerryCore
@testable import FerryPlanning

@Suite("OutageTracker")
struct OutageTrackerTests {
    /// 1 s, 2 s, 4 s, … as the retry policy would give.
    static func tracker(giveUpAfter: Double? = 60) -> OutageTracker<String> {
        OutageTracker(probeDelay: { Double(1 << min($0 - 1, 5)) }, giveUpAfter: giveUpAfter)
    }

    @Test("the first suspicious failure asks for one probe and stops new work; later ones wait with it")
    func firstFailureProbes() {
        var tracker = Self.tracker()
        #expect(tracker.isDispatching && tracker.isSettled)
        let first = tracker.jobFailedSuspiciously("a")
        #expect(first)
        #expect(!tracker.isDispatching)
        let second = tracker.jobFailedSuspiciously("b")
        let third = tracker.jobFailedSuspiciously("c")
        #expect(!second && !third)
        #expect(tracker.parkedCount == 3)
        #expect(tracker.state == .checking)
    }

    @Test("a probe that answers makes it a false alarm: the parked jobs go back as ordinary failures")
    func falseAlarm() {
        var tracker = Self.tracker()
        _ = tracker.jobFailedSuspiciously("a")
        _ = tracker.jobFailedSuspiciously("b")
        guard case let .falseAlarm(parked) = tracker.probeAnswered(reachable: true, now: 0.1) else {
            Issue.record("expected a false alarm")
            return
        }
        #expect(parked == ["a", "b"])
        #expect(tracker.isDispatching && tracker.isSettled)
    }

    @Test("no answer: offline, probes back off, and the parked jobs restart when the backend is back")
    func offlineThenBack() {
        var tracker = Self.tracker()
        _ = tracker.jobFailedSuspiciously("a")
        guard case let .wentOffline(first) = tracker.probeAnswered(reachable: false, now: 10) else {
            Issue.record("expected offline")
            return
        }
        #expect(first == 11)
        #expect(tracker.state == .offline(since: 10, probes: 1))
        // Jobs still in flight fail too and wait, without a second probe.
        let probesAgain = tracker.jobFailedSuspiciously("b")
        #expect(!probesAgain)
        var probeTimes: [Double] = []
        var now = first
        for _ in 0..<3 {
            guard case let .stillOffline(next) = tracker.probeAnswered(reachable: false, now: now) else {
                Issue.record("expected still offline")
                return
            }
            probeTimes.append(next - now)
            now = next
        }
        #expect(probeTimes == [2, 4, 8])
        guard case let .backOnline(parked, seconds) = tracker.probeAnswered(reachable: true, now: now) else {
            Issue.record("expected back online")
            return
        }
        #expect(parked == ["a", "b"])
        #expect(seconds == now - 10)
        #expect(tracker.isDispatching && tracker.isSettled)
    }

    @Test("offline for longer than allowed: the parked jobs are handed back and the tracker stops holding")
    func givesUp() {
        var tracker = Self.tracker(giveUpAfter: 5)
        _ = tracker.jobFailedSuspiciously("a")
        _ = tracker.probeAnswered(reachable: false, now: 0)
        guard case .stillOffline = tracker.probeAnswered(reachable: false, now: 4) else {
            Issue.record("gave up too early")
            return
        }
        guard case let .gaveUp(parked, seconds) = tracker.probeAnswered(reachable: false, now: 6) else {
            Issue.record("expected to give up")
            return
        }
        #expect(parked == ["a"])
        #expect(seconds == 6)
        #expect(tracker.isSettled)
    }

    @Test("without a limit the tracker waits for ever, the probe interval capped by the delay function")
    func waitsForever() {
        var tracker = Self.tracker(giveUpAfter: nil)
        _ = tracker.jobFailedSuspiciously("a")
        _ = tracker.probeAnswered(reachable: false, now: 0)
        var now = 0.0
        for _ in 0..<1000 {
            guard case let .stillOffline(next) = tracker.probeAnswered(reachable: false, now: now) else {
                Issue.record("stopped waiting")
                return
            }
            #expect(next - now <= 32)
            now = next
        }
        #expect(now > 3600 * 8)
    }
}
