import Testing

@testable import ExecBackend

@Suite("Restart backoff and version negotiation")
struct RestartBackoffTests {
    @Test("the first restart is immediate, then the delay doubles up to the maximum")
    func delays() {
        let backoff = RestartBackoff(base: .milliseconds(250), maximum: .seconds(2))
        #expect(backoff.delay(afterFailures: 0) == .zero)
        #expect(backoff.delay(afterFailures: 1) == .zero)
        #expect(backoff.delay(afterFailures: 2) == .milliseconds(250))
        #expect(backoff.delay(afterFailures: 3) == .milliseconds(500))
        #expect(backoff.delay(afterFailures: 5) == .seconds(2))
        #expect(backoff.delay(afterFailures: 500) == .seconds(2))
    }

    @Test("the highest version both sides speak is chosen; disjoint ranges agree on none")
    func negotiation() {
        #expect(PluginWireFormat.negotiate(1...1) == 1)
        #expect(PluginWireFormat.negotiate(1...7) == PluginWireFormat.versions.upperBound)
        #expect(PluginWireFormat.negotiate(2...3) == nil)
        #expect(PluginWireFormat.negotiate(0...0) == nil)
    }
}
