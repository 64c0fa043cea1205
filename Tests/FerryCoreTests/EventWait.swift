/// Waits until `happened` holds, looking every 5 ms, and says whether it did. What is
/// waited for is the event; the deadline only keeps a broken engine from hanging the
/// suite (the test then fails on the false).
func waitForEvent(_ happened: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline {
        if happened() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return happened()
}
