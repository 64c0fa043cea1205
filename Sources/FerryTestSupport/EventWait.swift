/// Waits until `happened` holds, looking every 5 ms, and says whether it did. What is
/// waited for is the event; the guard only keeps a broken engine from hanging the suite
/// (the test then fails on the false).
///
/// The guard counts the waiter's own turns as well as the time: it gives up once 600 s
/// have passed and it has looked at least 12,000 times (a minute of turns), or after an
/// hour whatever happened. On a starved machine the engine and this waiter get turns
/// alike: in a run at a load of 45 the waiter looked 37 times in 275 s, so a deadline in
/// seconds alone ended a wait in which the engine had hardly run.
public func waitForEvent(_ happened: () -> Bool) async -> Bool {
    let start = ContinuousClock.now
    var looks = 0
    while true {
        if happened() { return true }
        looks += 1
        let waited = ContinuousClock.now - start
        if waited > .seconds(3600) || (waited > .seconds(600) && looks >= 12_000) { return happened() }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
