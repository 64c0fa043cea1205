/// Waits until `happened` holds, looking every 5 ms, and says whether it did. What is
/// waited for is the event; the deadline only keeps a broken engine from hanging the
/// suite (the test then fails on the false). It is far from any real wait: in the whole
/// suite, beside the integration tests' processes on two cores, an engine test's run has
/// taken over 120 s to reach its first upload.
func waitForEvent(_ happened: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(600)
    while ContinuousClock.now < deadline {
        if happened() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return happened()
}
