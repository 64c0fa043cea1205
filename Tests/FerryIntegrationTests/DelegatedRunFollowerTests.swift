@testable import ferry
import Testing

/// The rules by which `ferry push FOLDER` follows the run it handed to the daemon: which
/// events are its run's, when that run has ended, and what a reload or a pause means.
@Suite("Delegated run follower")
struct DelegatedRunFollowerTests {
    typealias Step = DelegatedRunFollower.Step

    /// Feeds events in order and returns the steps, asking the daemon whenever told to
    /// (`running`: whether it says a run was under way each time).
    static func follow(_ events: [(String, [String: Any])], running: [Bool] = [false, false, false]) -> ([Step], DelegatedRunFollower) {
        var follower = DelegatedRunFollower(folder: "photos")
        var asks = running.makeIterator()
        var steps: [Step] = []
        for (name, object) in events {
            let step = follower.handle(name, object)
            if case .ask = step { follower.askedDaemon(whileRunning: asks.next() ?? false) }
            steps.append(step)
        }
        return (steps, follower)
    }

    static var mine: [String: Any] { ["folder": "photos"] }

    @Test("nothing is asked before the stream's first status; then the run's events are shown and its end ends the follow")
    func plainRun() {
        let (steps, follower) = Self.follow([
            ("transferred", Self.mine), ("status", [:]), ("run_started", Self.mine), ("transferred", Self.mine),
            ("summary", ["folder": "photos", "uploaded": 3]), ("run_ended", Self.mine),
        ])
        #expect(steps == [.ignore, .ask(afterReload: false), .ignore, .show, .show, .ended])
        #expect(follower.summary?["uploaded"] as? Int == 3)
    }

    @Test("asked while a run is under way: that run's events and end pass, the next run is ours")
    func runUnderWayFirst() {
        let (steps, _) = Self.follow([
            ("status", [:]), ("transferred", Self.mine), ("run_ended", Self.mine),
            ("run_started", Self.mine), ("transferred", Self.mine), ("run_ended", Self.mine),
        ], running: [true])
        #expect(steps == [.ask(afterReload: false), .ignore, .ignore, .ignore, .show, .ended])
    }

    @Test("a run stopped by a reload is not ours ending: the new runtime is asked, and its run is followed")
    func reloadAsksAgain() {
        let (steps, follower) = Self.follow([
            ("status", [:]), ("run_started", Self.mine), ("summary", ["folder": "photos", "uploaded": 1]),
            ("run_ended", ["folder": "photos", "stopped": true]), ("reload", ["folders": ["photos", "gpx"]]),
            ("transferred", Self.mine), ("run_started", Self.mine), ("run_ended", Self.mine),
        ])
        #expect(steps == [.ask(afterReload: false), .ignore, .show, .ignore, .ask(afterReload: true), .ignore, .ignore, .ended])
        #expect(follower.summary == nil, "the stopped run's summary is not the new run's")
    }

    @Test("a reload without the folder, a pause, or a run that failed end the follow with that error")
    func failures() {
        let (gone, _) = Self.follow([("status", [:]), ("reload", ["folders": ["gpx"]])])
        #expect(gone.last == .failed("the daemon reloaded its config and photos is no longer in it"))
        let (paused, _) = Self.follow([("status", [:]), ("run_started", Self.mine), ("paused", Self.mine)])
        guard case .failed(let message) = paused.last else { Issue.record("a pause did not end the follow"); return }
        #expect(message.hasPrefix("photos was paused in the daemon"))
        let (failed, _) = Self.follow([("status", [:]), ("run_started", Self.mine),
                                       ("run_ended", ["folder": "photos", "error": "cannot list nas:photos"])])
        #expect(failed.last == .failed("cannot list nas:photos"))
    }

    @Test("another folder's events are never shown, nor its end taken for ours")
    func otherFolder() {
        let other: [String: Any] = ["folder": "gpx"]
        let (steps, _) = Self.follow([
            ("status", [:]), ("run_started", other), ("transferred", other), ("run_ended", other),
            ("run_started", Self.mine), ("run_ended", Self.mine),
        ])
        #expect(steps == [.ask(afterReload: false), .ignore, .ignore, .ignore, .ignore, .ended])
    }
}
