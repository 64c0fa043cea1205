import Foundation
import Testing

@testable import FerryConfig

/// The `watch:`, `schedule:` and `bandwidth:` sections of config.yml.
@Suite("Daemon config")
struct DaemonConfigTests {
    static let base = """
        remotes:
          nas:
            type: local
            path: /mnt/nas
        folders:
          photos:
            path: /photos
            remote: nas

        """

    @Test("all three sections load with their values")
    func allValues() throws {
        let config = try ConfigLoaderTests.parse(Self.base + """
            watch:
              quiet_period: 5s
              rescan_interval: 30m
              poll_interval: 2m
              stop_timeout: 20s
            schedule:
              - every: 4h
                run: push photos
              - cron: "0 2 * * *"
                run: push
                queues: [archives]
            bandwidth:
              all: 10M
              remotes:
                nas: "08:00,1M 18:00,5M 23:00,off"
              queues:
                archives: "08:00,256k 23:00,off"
            """)
        #expect(config.watch.quietPeriod == .seconds(5))
        #expect(config.watch.rescanInterval == .seconds(1800))
        #expect(config.watch.pollInterval == .seconds(120))
        #expect(config.watch.stopTimeout == .seconds(20))
        #expect(config.schedules == [
            ScheduleEntry(trigger: .every(.seconds(4 * 3600)), mode: .push, folder: "photos", queues: nil),
            ScheduleEntry(trigger: .cron(try CronExpression("0 2 * * *")), mode: .push, folder: nil, queues: ["archives"]),
        ])
        #expect(config.bandwidth.all == (try BandwidthTimetable("10M")))
        #expect(config.bandwidth.remotes["nas"]?.slots.count == 3)
        #expect(config.bandwidth.queues["archives"]?.slots.count == 2)
    }

    @Test("without the sections: a 3 s quiet period, hourly rescans, no schedules, no timetables")
    func defaults() throws {
        let config = try ConfigLoaderTests.parse(Self.base)
        #expect(config.watch == WatchSettings())
        #expect(config.watch.quietPeriod == .seconds(3))
        #expect(config.watch.rescanInterval == .seconds(3600))
        #expect(config.schedules.isEmpty)
        #expect(config.bandwidth.isEmpty)
    }

    /// Line numbers count from the first line of `base` (9 lines).
    static let errorCases: [ConfigErrorCase] = [
        ConfigErrorCase(name: "an unknown watch key", yaml: base + "watch:\n  quiet: 5s\n",
                        line: 10, column: 3, mentions: "unknown key", key: "watch.quiet"),
        ConfigErrorCase(name: "a quiet period that is not a duration", yaml: base + "watch:\n  quiet_period: soon\n",
                        line: 10, column: 17, mentions: "expected a duration", key: "watch.quiet_period"),
        ConfigErrorCase(name: "a schedule that is not a list", yaml: base + "schedule:\n  every: 4h\n",
                        line: 10, column: 3, mentions: "expected a list", key: "schedule"),
        ConfigErrorCase(name: "a schedule entry with both every and cron",
                        yaml: base + "schedule:\n  - every: 4h\n    cron: \"0 2 * * *\"\n    run: push photos\n",
                        line: 11, column: 5, mentions: "either 'every' or 'cron'", key: "schedule[0].cron"),
        ConfigErrorCase(name: "a cron expression with four fields",
                        yaml: base + "schedule:\n  - cron: \"0 2 * *\"\n    run: push photos\n",
                        line: 10, column: 11, mentions: "5 fields", key: "schedule[0].cron"),
        ConfigErrorCase(name: "a cron hour out of range",
                        yaml: base + "schedule:\n  - cron: \"0 25 * * *\"\n    run: push photos\n",
                        line: 10, column: 11, mentions: "outside 0-23", key: "schedule[0].cron"),
        ConfigErrorCase(name: "an interval under a minute",
                        yaml: base + "schedule:\n  - every: 10s\n    run: push photos\n",
                        line: 10, column: 12, mentions: "shortest interval", key: "schedule[0].every"),
        ConfigErrorCase(name: "a schedule naming an unknown folder",
                        yaml: base + "schedule:\n  - every: 4h\n    run: push videos\n",
                        line: 11, column: 10, mentions: "no folder named 'videos'", key: "schedule[0].run"),
        ConfigErrorCase(name: "a schedule with an unknown verb",
                        yaml: base + "schedule:\n  - every: 4h\n    run: mirror photos\n",
                        line: 11, column: 10, mentions: "push FOLDER", key: "schedule[0].run"),
        ConfigErrorCase(name: "a schedule without run", yaml: base + "schedule:\n  - every: 4h\n",
                        line: 10, column: 5, mentions: "missing required key 'run'", key: "schedule[0]"),
        ConfigErrorCase(name: "a schedule without a time", yaml: base + "schedule:\n  - run: push photos\n",
                        line: 10, column: 5, mentions: "missing 'every'", key: "schedule[0]"),
        ConfigErrorCase(name: "a schedule naming an unknown queue",
                        yaml: base + "schedule:\n  - every: 4h\n    run: push photos\n    queues: [videos]\n",
                        line: 12, column: 14, mentions: "no queue named 'videos'", key: "schedule[0].queues"),
        ConfigErrorCase(name: "a timetable for an unknown remote",
                        yaml: base + "bandwidth:\n  remotes:\n    cloud: 1M\n",
                        line: 11, column: 5, mentions: "no remote named 'cloud'", key: "bandwidth.remotes.cloud"),
        ConfigErrorCase(name: "a timetable with a bad time",
                        yaml: base + "bandwidth:\n  queues:\n    archives: \"25:00,1M\"\n",
                        line: 11, column: 15, mentions: "time of day", key: "bandwidth.queues.archives"),
        ConfigErrorCase(name: "a timetable with a bad rate",
                        yaml: base + "bandwidth:\n  all: \"08:00,fast\"\n",
                        line: 10, column: 8, mentions: "not a rate", key: "bandwidth.all"),
    ]

    @Test("each problem is reported at the offending node", arguments: errorCases)
    func errorLocation(_ row: ConfigErrorCase) throws {
        let error = try #require(throws: ConfigError.self) { try ConfigLoaderTests.parse(row.yaml) }
        #expect(error.line == row.line)
        #expect(error.column == row.column)
        #expect(error.key == row.key)
        #expect(error.message.contains(row.mentions), "message: \(error.message)")
        #expect(!error.description.contains("\n"))
    }
}
