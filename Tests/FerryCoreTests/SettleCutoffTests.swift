import Testing

@testable import FerryCore

@Suite("when a scanned file counts as still being written")
struct SettleCutoffTests {
    static let cutoff = SettleCutoff(now: 1_000_000, quietPeriod: 3)

    static func nanos(_ seconds: Double) -> Int64 { Int64(seconds * 1e9) }

    @Test("fresh while modified within the quiet period before now; settled once it has passed")
    func window() {
        #expect(Self.cutoff.isFresh(modifiedNanos: Self.nanos(1_000_000)))
        #expect(Self.cutoff.isFresh(modifiedNanos: Self.nanos(999_997.5)))
        #expect(!Self.cutoff.isFresh(modifiedNanos: Self.nanos(999_997)))
        #expect(!Self.cutoff.isFresh(modifiedNanos: Self.nanos(1)))
    }

    @Test("a time ahead of the clock by less than the quiet period is fresh (a clock stepped back); further ahead it is settled")
    func future() {
        #expect(Self.cutoff.isFresh(modifiedNanos: Self.nanos(1_000_002.5)))
        #expect(!Self.cutoff.isFresh(modifiedNanos: Self.nanos(1_000_003)))
        #expect(!Self.cutoff.isFresh(modifiedNanos: Self.nanos(1_086_400)))
    }
}
