import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test("default delays double from 1 s and stop at 30 s", arguments: [
        (1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 30), (7, 30), (8, 30), (20, 30), (1000, 30),
    ])
    func defaultDelays(failures: Int, seconds: Int64) {
        #expect(RetryPolicy().delay(afterFailures: failures) == .seconds(seconds))
    }

    @Test("the sequence after 1…7 failures is 1,2,4,8,16,30,30 s")
    func defaultSequence() {
        let policy = RetryPolicy()
        #expect((1...7).map { policy.delay(afterFailures: $0) } == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
    }

    @Test("zero or negative failure counts wait the base delay", arguments: [0, -1, -100])
    func belowOne(failures: Int) {
        #expect(RetryPolicy().delay(afterFailures: failures) == .seconds(1))
    }

    @Test("defaults match DESIGN.md: 5 attempts, base 1 s, factor 2, max 30 s")
    func defaults() {
        let policy = RetryPolicy()
        #expect(policy.attempts == 5)
        #expect(policy.baseDelay == .seconds(1))
        #expect(policy.factor == 2)
        #expect(policy.maxDelay == .seconds(30))
        #expect(policy == RetryPolicy(attempts: 5, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(30)))
    }

    @Test("custom base, factor and cap", arguments: [
        (1, Int64(500)), (2, Int64(1500)), (3, Int64(4500)), (4, Int64(10_000)), (5, Int64(10_000)),
    ])
    func customPolicy(failures: Int, milliseconds: Int64) {
        let policy = RetryPolicy(attempts: 10, baseDelay: .milliseconds(500), factor: 3, maxDelay: .seconds(10))
        #expect(policy.delay(afterFailures: failures) == .milliseconds(milliseconds))
    }

    @Test("factor 1 keeps a constant delay")
    func constantDelay() {
        let policy = RetryPolicy(baseDelay: .seconds(7), factor: 1, maxDelay: .seconds(60))
        for failures in 1...12 {
            #expect(policy.delay(afterFailures: failures) == .seconds(7))
        }
    }

    @Test("a fractional factor grows slowly and is rounded to milliseconds")
    func fractionalFactor() {
        let policy = RetryPolicy(baseDelay: .seconds(1), factor: 1.5, maxDelay: .seconds(5))
        #expect(policy.delay(afterFailures: 1) == .milliseconds(1000))
        #expect(policy.delay(afterFailures: 2) == .milliseconds(1500))
        #expect(policy.delay(afterFailures: 3) == .milliseconds(2250))
        #expect(policy.delay(afterFailures: 4) == .milliseconds(3375))
        #expect(policy.delay(afterFailures: 5) == .seconds(5))
    }

    @Test("a huge factor and failure count cannot overflow past the cap")
    func noOverflow() {
        let policy = RetryPolicy(baseDelay: .seconds(1), factor: 10, maxDelay: .seconds(300))
        #expect(policy.delay(afterFailures: 3) == .seconds(100))
        #expect(policy.delay(afterFailures: 4) == .seconds(300))
        #expect(policy.delay(afterFailures: 1_000_000) == .seconds(300))
        #expect(RetryPolicy().delay(afterFailures: 1 << 40) == .seconds(30))
    }

    @Test(
        "any failure count, however large, gives the capped delay")
    func hugeFailureCount() {
        #expect(RetryPolicy().delay(afterFailures: Int.max) == .seconds(30))
    }

    @Test("the cap applies even when the base is larger than it")
    func baseAboveCap() {
        let policy = RetryPolicy(baseDelay: .seconds(60), factor: 2, maxDelay: .seconds(30))
        #expect(policy.delay(afterFailures: 1) == .seconds(30))
    }

    @Test("a Retry-After hint longer than the backoff wins", arguments: [
        (1, Int64(10), Int64(10)), (2, Int64(3), Int64(3)), (5, Int64(20), Int64(20)), (1, Int64(30), Int64(30)),
    ])
    func retryAfterWins(failures: Int, hint: Int64, expected: Int64) {
        #expect(RetryPolicy().delay(afterFailures: failures, retryAfter: .seconds(hint)) == .seconds(expected))
    }

    @Test("a Retry-After hint shorter than the backoff does not shorten it", arguments: [
        (3, Int64(1), Int64(4)), (5, Int64(0), Int64(16)), (6, Int64(2), Int64(30)),
    ])
    func shortRetryAfterLoses(failures: Int, hint: Int64, expected: Int64) {
        #expect(RetryPolicy().delay(afterFailures: failures, retryAfter: .seconds(hint)) == .seconds(expected))
    }

    @Test("a Retry-After hint longer than the cap is capped", arguments: [Int64(31), Int64(120), Int64(86_400)])
    func retryAfterCapped(hint: Int64) {
        #expect(RetryPolicy().delay(afterFailures: 1, retryAfter: .seconds(hint)) == .seconds(30))
        #expect(RetryPolicy(maxDelay: .seconds(60)).delay(afterFailures: 1, retryAfter: .seconds(hint)) == .seconds(min(hint, 60)))
    }

    @Test("a sub-second Retry-After hint keeps its milliseconds")
    func fractionalRetryAfter() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), factor: 2, maxDelay: .seconds(30))
        #expect(policy.delay(afterFailures: 1, retryAfter: .milliseconds(750)) == .milliseconds(750))
    }

    @Test("allowsAnotherAttempt counts the first attempt", arguments: [
        (0, true), (1, true), (4, true), (5, false), (6, false), (100, false),
    ])
    func allowsAnotherAttempt(failures: Int, allowed: Bool) {
        #expect(RetryPolicy().allowsAnotherAttempt(afterFailures: failures) == allowed)
    }

    @Test("one attempt means no retry")
    func singleAttempt() {
        let policy = RetryPolicy(attempts: 1)
        #expect(policy.allowsAnotherAttempt(afterFailures: 0))
        #expect(!policy.allowsAnotherAttempt(afterFailures: 1))
    }
}
