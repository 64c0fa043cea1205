import FerrySystem
import FerryTestSupport
import Foundation
import Testing

import FerryConfig
@testable import FerryCore
import FerryDaemon

/// Schedules over days and weeks, with the time passed in: no test waits.
@Suite("Schedules")
struct ScheduleTests {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }()

    /// A local time in Berlin.
    static func at(_ day: Int, _ hour: Int, _ minute: Int = 0, month: Int = 3, year: Int = 2026) -> Date {
        calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    }

    static func entry(_ trigger: ScheduleEntry.Trigger, folder: String = "photos", queues: [String]? = nil) -> ScheduleEntry {
        ScheduleEntry(trigger: trigger, mode: .push, folder: folder, queues: queues)
    }

    @Test("cron fields: lists, ranges, steps, and the day-of-month/day-of-week OR rule")
    func cronParsing() throws {
        let expression = try CronExpression("*/15 8-18/2 1,15 * 1-5")
        #expect(expression.minutes == [0, 15, 30, 45])
        #expect(expression.hours == [8, 10, 12, 14, 16, 18])
        #expect(expression.daysOfMonth == [1, 15])
        #expect(expression.daysOfWeek == [1, 2, 3, 4, 5])
        #expect(try CronExpression("0 0 * * 7").daysOfWeek == [0])
        // 2026-03-15 is a Sunday: day of month 15 matches although Sunday is not in 1-5.
        let next = try #require(expression.nextTime(after: Self.at(14, 19), calendar: Self.calendar))
        #expect(next == Self.at(15, 8))
    }

    @Test("bad cron expressions are refused with what is wrong", arguments: [
        "0 2 * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "*/0 * * * *", "a * * * *", "5-1 * * * *",
    ])
    func cronErrors(text: String) {
        #expect(throws: ScheduleError.self) { try CronExpression(text) }
    }

    @Test("\"0 2 * * *\" runs at 02:00 local time every day; the day summer time skips 02:00 has no run")
    func nightlyCron() throws {
        let nightly = try CronExpression("0 2 * * *")
        var moment = Self.at(27, 12)
        var runs: [Date] = []
        for _ in 0..<4 {
            moment = try #require(nightly.nextTime(after: moment, calendar: Self.calendar))
            runs.append(moment)
        }
        // 29 March 2026: 02:00 does not exist in Berlin (clocks jump to 03:00).
        let hours = runs.map { Self.calendar.component(.hour, from: $0) }
        let days = runs.map { Self.calendar.component(.day, from: $0) }
        #expect(days == [28, 30, 31, 1])
        #expect(hours == [2, 2, 2, 2])
    }

    @Test("an interval entry runs at start, then every interval after each run")
    func intervalEntry() {
        let every4h = Self.entry(.every(.seconds(4 * 3600)))
        var book = ScheduleBook(entries: [every4h], lastRuns: [:], calendar: Self.calendar, startedAt: Self.at(10, 9))
        #expect(book.takeDue(at: Self.at(10, 9)) == [every4h])
        #expect(book.nextDue(every4h) == Self.at(10, 13))
        #expect(book.takeDue(at: Self.at(10, 12, 59)).isEmpty)
        #expect(book.takeDue(at: Self.at(10, 13)) == [every4h])
        #expect(book.nextWake == Self.at(10, 17))
    }

    @Test("a cron entry that never ran waits for its first time; it does not run at start")
    func cronWaitsForFirstTime() throws {
        let nightly = Self.entry(.cron(try CronExpression("0 2 * * *")))
        var book = ScheduleBook(entries: [nightly], lastRuns: [:], calendar: Self.calendar, startedAt: Self.at(10, 9))
        #expect(book.takeDue(at: Self.at(10, 9)).isEmpty)
        #expect(book.nextWake == Self.at(11, 2))
        #expect(book.takeDue(at: Self.at(11, 2)) == [nightly])
        #expect(book.nextDue(nightly) == Self.at(12, 2))
    }

    @Test("runs missed while the machine slept run once at start, not once per missed slot")
    func missedRunsCatchUpOnce() throws {
        let nightly = Self.entry(.cron(try CronExpression("0 2 * * *")))
        let hourly = Self.entry(.every(.seconds(3600)), folder: "gps")
        // Last runs a week ago; Ferry starts again now.
        let lastRuns = [nightly.key: Self.at(3, 2), hourly.key: Self.at(3, 5)]
        var book = ScheduleBook(entries: [nightly, hourly], lastRuns: lastRuns, calendar: Self.calendar,
                                startedAt: Self.at(10, 9, 30))
        let due = book.takeDue(at: Self.at(10, 9, 30))
        #expect(due == [nightly, hourly])
        // Then nothing until the next regular time.
        #expect(book.takeDue(at: Self.at(10, 9, 31)).isEmpty)
        #expect(book.nextDue(nightly) == Self.at(11, 2))
        #expect(book.nextDue(hourly) == Self.at(10, 10, 30))
    }

    @Test("an entry's key survives a restart and differs when what it runs differs")
    func entryKeys() throws {
        let one = Self.entry(.cron(try CronExpression("0 2 * * *")), queues: ["archives"])
        let same = Self.entry(.cron(try CronExpression("0  2 * * *")), queues: ["archives"])
        let other = Self.entry(.cron(try CronExpression("0 2 * * *")))
        #expect(one.key == same.key)
        #expect(one.key != other.key)
    }

    @Test("a bandwidth timetable switches at its times and wraps around midnight")
    func bandwidthTimetable() throws {
        let timetable = try BandwidthTimetable("08:00,1M 18:00,5M 23:00,off")
        #expect(timetable.rate(at: Self.at(10, 7, 59), calendar: Self.calendar) == nil)
        #expect(timetable.rate(at: Self.at(10, 8), calendar: Self.calendar) == 1 << 20)
        #expect(timetable.rate(at: Self.at(10, 17, 59), calendar: Self.calendar) == 1 << 20)
        #expect(timetable.rate(at: Self.at(10, 18), calendar: Self.calendar) == 5 << 20)
        #expect(timetable.rate(at: Self.at(10, 23, 30), calendar: Self.calendar) == nil)
        #expect(timetable.nextChange(after: Self.at(10, 9), calendar: Self.calendar) == Self.at(10, 18))
        #expect(timetable.nextChange(after: Self.at(10, 23, 30), calendar: Self.calendar) == Self.at(11, 8))
        let constant = try BandwidthTimetable("512k")
        #expect(constant.rate(at: Self.at(10, 3), calendar: Self.calendar) == Int64(512 * 1024))
        #expect(constant.nextChange(after: Self.at(10, 3), calendar: Self.calendar) == nil)
    }

    @Test("bad timetables are refused", arguments: ["", "08:00", "25:00,1M", "08:00,fast", "08:00,1M 08:00,2M", "8:5,1M"])
    func bandwidthErrors(text: String) {
        #expect(throws: ScheduleError.self) { try BandwidthTimetable(text) }
    }

    @Test("the switcher changes shared throttles in place at the timetable's times")
    func switcherAppliesRates() throws {
        var settings = BandwidthSettings()
        settings.remotes["nas"] = try BandwidthTimetable("08:00,1M 18:00,5M 23:00,off")
        settings.queues["archives"] = try BandwidthTimetable("00:00,off 09:00,256k")
        let switcher = BandwidthSwitcher(settings: settings, calendar: Self.calendar,
                                         clock: InstantClock(wallStart: Self.at(10, 12).timeIntervalSince1970))
        let nas = try #require(switcher.remotes["nas"])
        let archives = try #require(switcher.queues["archives"])
        #expect(nas.bytesPerSecond == 1 << 20 && archives.bytesPerSecond == Int64(256 * 1024))
        #expect(switcher.shared(remote: "nas").count == 1 && switcher.shared(remote: "other").isEmpty)
        #expect(switcher.nextChange(after: Self.at(10, 12)) == Self.at(10, 18))
        switcher.apply(at: Self.at(10, 18))
        #expect(nas.bytesPerSecond == 5 << 20)
        switcher.apply(at: Self.at(10, 23, 1))
        #expect(nas.bytesPerSecond == nil)
        // Unlimited: no pause at all, whatever the amount.
        #expect(nas.reserve(100 << 20) == .zero)
        switcher.apply(at: Self.at(11, 8))
        #expect(nas.reserve(4 << 20) > .seconds(2))
    }

    @Test("intervals are shown as config.yml writes them")
    func intervalText() {
        #expect(Self.entry(.every(.seconds(4 * 3600))).triggerText == "every 4h")
        #expect(Self.entry(.every(.seconds(86_400))).triggerText == "every 1d")
        #expect(Self.entry(.every(.seconds(90))).triggerText == "every 90s")
        #expect(Self.entry(.every(.seconds(1800))).triggerText == "every 30m")
    }

    @Test("merged run requests keep the widest queue restriction")
    func requestMerging() {
        let archives = RunRequest(reason: "schedule", queues: ["archives"])
        let gpx = RunRequest(reason: "schedule", queues: ["gpx"])
        #expect(archives.merged(with: gpx).queues == ["archives", "gpx"])
        #expect(archives.merged(with: RunRequest(reason: "watch")).queues == nil)
    }
}
