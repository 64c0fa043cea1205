import FerryConfig
import FerryCore
import FerryEngine
import FerrySystem
import Foundation
import ServiceLifecycle

/// The throttles of the `bandwidth:` timetables, shared by every run of the process, and
/// the switch that sets their rates by the time of day. Switching changes a throttle's
/// rate in place: running transfers keep going (and keep their parallelism) at the new rate.
public final class BandwidthSwitcher: Service {
    public let all: ByteThrottle?
    public let remotes: [String: ByteThrottle]
    public let queues: [String: ByteThrottle]
    private let settings: BandwidthSettings
    private let calendar: Calendar
    private let clock: any FerryClock

    /// The rates start as the timetables say for the clock's wall time now.
    public init(settings: BandwidthSettings, calendar: Calendar = .current, clock: any FerryClock) {
        self.settings = settings
        self.calendar = calendar
        self.clock = clock
        let now = clock.wallDate()
        all = settings.all.map { ByteThrottle(bytesPerSecond: $0.rate(at: now, calendar: calendar), clock: clock) }
        remotes = settings.remotes.mapValues { ByteThrottle(bytesPerSecond: $0.rate(at: now, calendar: calendar), clock: clock) }
        queues = settings.queues.mapValues { ByteThrottle(bytesPerSecond: $0.rate(at: now, calendar: calendar), clock: clock) }
    }

    /// The throttles a run of a pair on `remote` (its name in config.yml) shares.
    public func shared(remote: String?) -> [ByteThrottle] {
        [all, remote.flatMap { remotes[$0] }].compactMap { $0 }
    }

    /// Sets every throttle to its timetable's rate at `date`.
    public func apply(at date: Date) {
        if let timetable = settings.all { all?.update(bytesPerSecond: timetable.rate(at: date, calendar: calendar)) }
        for (name, timetable) in settings.remotes { remotes[name]?.update(bytesPerSecond: timetable.rate(at: date, calendar: calendar)) }
        for (name, timetable) in settings.queues { queues[name]?.update(bytesPerSecond: timetable.rate(at: date, calendar: calendar)) }
    }

    /// The next moment any timetable changes.
    public func nextChange(after date: Date) -> Date? {
        let timetables = [settings.all].compactMap { $0 } + Array(settings.remotes.values) + Array(settings.queues.values)
        return timetables.compactMap { $0.nextChange(after: date, calendar: calendar) }.min()
    }

    /// Keeps the rates current until cancelled. Wakes at each change, and at least once a
    /// minute so a clock change or a suspend does not leave a stale rate for long.
    public func run() async {
        guard !settings.isEmpty else { return }
        while !Task.isCancelled {
            let now = clock.wallDate()
            apply(at: now)
            let wait = min(60, max(0.05, (nextChange(after: now)?.timeIntervalSince(now) ?? 60)))
            await clock.sleep(for: wait)
        }
    }
}
