import FerryCore
import FerryTestSupport

/// A run clock for a run replayed from a seed: its waits return at once (`InstantClock`),
/// and its wall time starts at a given moment, so the run's trash folder and its conflict
/// copies get the same names on every replay.
struct ReplayClock: RunClock {
    let start: Double
    private let instant = InstantClock()

    /// `start`: seconds since 1970 at the run's start.
    init(start: Double) {
        self.start = start
    }

    func now() -> Double { instant.now() }

    func sleep(until deadline: Double) async {
        await instant.sleep(until: deadline)
    }

    func wallTime() -> Double { start + instant.now() }
}
