@testable import FerryControl
import Testing

/// The status's rate over the last ten seconds of samples, time passed in.
@Suite struct RateMeterTests {
    @Test("no rate until two samples half a second apart; then bytes over seconds")
    func rateFromSamples() {
        let meter = RateMeter()
        #expect(meter.rate(folder: "a", bytesDone: 0, at: 100) == nil)
        #expect(meter.rate(folder: "a", bytesDone: 1000, at: 100.3) == nil)
        #expect(meter.rate(folder: "a", bytesDone: 4000, at: 102) == 2000)
    }

    @Test("only the last ten seconds count: a stalled run's rate falls to zero")
    func window() {
        let meter = RateMeter()
        _ = meter.rate(folder: "a", bytesDone: 0, at: 0)
        _ = meter.rate(folder: "a", bytesDone: 100_000, at: 5)
        #expect(meter.rate(folder: "a", bytesDone: 100_000, at: 12) == 0)
    }

    @Test("a run that starts again with fewer bytes starts afresh; folders are apart")
    func restart() {
        let meter = RateMeter()
        _ = meter.rate(folder: "a", bytesDone: 0, at: 0)
        _ = meter.rate(folder: "a", bytesDone: 50_000, at: 1)
        #expect(meter.rate(folder: "a", bytesDone: 10, at: 2) == nil)
        #expect(meter.rate(folder: "b", bytesDone: 7, at: 2) == nil)
        meter.forget(folder: "a")
        #expect(meter.rate(folder: "a", bytesDone: 0, at: 3) == nil)
    }
}
