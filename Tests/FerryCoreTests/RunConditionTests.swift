import FerryConfig
import FerrySystem
import FerryTestSupport
import Foundation
import Testing
@testable import FerryCore
import FerryDaemon

/// Run conditions (`when:`): the decision from a reading, the daemon's wait, and the
/// readings from a fake sysfs tree and from nmcli's output. Pure values and files only.
@Suite("run conditions")
struct RunConditionTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var conditions: RunConditions
        var reading: ConditionReading
        /// Words each reason must contain, in order; empty: the folder may run.
        var unmet: [String]

        var testDescription: String { name }
    }

    static let mains = ConditionReading.Power(onMains: true, batteryPercent: 80)
    static let battery50 = ConditionReading.Power(onMains: false, batteryPercent: 50)
    static let battery20 = ConditionReading.Power(onMains: false, batteryPercent: 20)
    static let desktop = ConditionReading.Power(onMains: true, batteryPercent: nil)
    static let strict = RunConditions(network: .unmetered, power: .ac, minBattery: 30)

    static let rows: [Row] = [
        Row(name: "no conditions", conditions: RunConditions(), reading: ConditionReading(), unmet: []),
        Row(name: "unmetered network wanted and had", conditions: RunConditions(network: .unmetered),
            reading: ConditionReading(network: .unmetered), unmet: []),
        Row(name: "metered network", conditions: RunConditions(network: .unmetered),
            reading: ConditionReading(network: .metered), unmet: ["metered"]),
        Row(name: "no network", conditions: RunConditions(network: .unmetered),
            reading: ConditionReading(network: .offline), unmet: ["none is up"]),
        Row(name: "cannot tell", conditions: RunConditions(network: .unmetered),
            reading: ConditionReading(network: .unknown("nmcli not found; set when.network_command")), unmet: ["nmcli not found"]),
        Row(name: "network_command said no", conditions: RunConditions(networkCommand: "false"),
            reading: ConditionReading(network: .refused(status: 1)), unmet: ["exited with status 1"]),
        Row(name: "network_command said yes", conditions: RunConditions(networkCommand: "true"),
            reading: ConditionReading(network: .unmetered), unmet: []),
        Row(name: "mains wanted, on battery", conditions: RunConditions(power: .ac),
            reading: ConditionReading(power: battery50), unmet: ["mains power"]),
        Row(name: "mains wanted, on mains", conditions: RunConditions(power: .ac),
            reading: ConditionReading(power: mains), unmet: []),
        Row(name: "mains wanted, a desktop with no battery", conditions: RunConditions(power: .ac),
            reading: ConditionReading(power: desktop), unmet: []),
        Row(name: "battery above the minimum", conditions: RunConditions(minBattery: 30),
            reading: ConditionReading(power: battery50), unmet: []),
        Row(name: "battery below the minimum", conditions: RunConditions(minBattery: 30),
            reading: ConditionReading(power: battery20), unmet: ["reach 30% (at 20%)"]),
        Row(name: "battery low but charging: mains power makes the charge not matter", conditions: RunConditions(minBattery: 30),
            reading: ConditionReading(power: ConditionReading.Power(onMains: true, batteryPercent: 10)), unmet: []),
        Row(name: "everything wrong at once", conditions: strict,
            reading: ConditionReading(network: .metered, power: battery20), unmet: ["metered", "mains power", "reach 30%"]),
        Row(name: "everything right", conditions: strict, reading: ConditionReading(network: .unmetered, power: mains), unmet: []),
    ]

    @Test("what a folder waits for, from a reading", arguments: rows)
    func unmet(_ row: Row) {
        let reasons = RunConditionCheck.unmet(row.conditions, reading: row.reading)
        #expect(reasons.count == row.unmet.count, "\(reasons)")
        for (reason, words) in zip(reasons, row.unmet) { #expect(reason.contains(words), "\(reason)") }
    }

    struct WaitStep: Sendable {
        var now: Double
        /// Whether the runner reads the conditions at this moment (a request came in).
        var probeDue: Bool
        var unmet: [String]?
        var decision: ConditionWait.Decision?
    }

    @Test("the daemon waits, does not probe again before the recheck, and runs when they hold again")
    func daemonWait() {
        var wait = ConditionWait(interval: 60)
        let steps: [WaitStep] = [
            WaitStep(now: 0, probeDue: true, unmet: [], decision: .run),
            WaitStep(now: 10, probeDue: true, unmet: ["mains power (on battery)"],
                     decision: .wait(reason: "waiting for mains power (on battery)", recheckAt: 70)),
            // Watch events while waiting: kept by the runner, no new probe.
            WaitStep(now: 20, probeDue: false, unmet: nil, decision: nil),
            WaitStep(now: 69.9, probeDue: false, unmet: nil, decision: nil),
            WaitStep(now: 70, probeDue: true, unmet: ["mains power (on battery)"],
                     decision: .wait(reason: "waiting for mains power (on battery)", recheckAt: 130)),
            WaitStep(now: 130, probeDue: true, unmet: [], decision: .run),
            WaitStep(now: 131, probeDue: true, unmet: nil, decision: nil),
        ]
        for step in steps {
            #expect(wait.probeDue(now: step.now) == step.probeDue, "at \(step.now)")
            if let unmet = step.unmet {
                #expect(wait.decide(unmet: unmet, now: step.now) == step.decision, "at \(step.now)")
            }
        }
        #expect(wait.reason == nil && wait.recheckAt == nil)
    }

    struct NmcliRow: Sendable, CustomTestStringConvertible {
        var name: String
        var output: String
        var network: ConditionReading.Network
        var testDescription: String { name }
    }

    static let nmcliRows: [NmcliRow] = [
        NmcliRow(name: "wifi, not metered (guessed)", output: """
            GENERAL.TYPE:wifi
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:no (guessed)

            GENERAL.TYPE:loopback
            GENERAL.STATE:100 (connected (externally))
            GENERAL.METERED:no

            """, network: .unmetered),
        NmcliRow(name: "a phone's hotspot (metered, guessed)", output: """
            GENERAL.TYPE:wifi
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:yes (guessed)
            """, network: .metered),
        NmcliRow(name: "a modem set metered beside an unplugged ethernet", output: """
            GENERAL.TYPE:ethernet
            GENERAL.STATE:20 (unavailable)
            GENERAL.METERED:unknown

            GENERAL.TYPE:gsm
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:yes
            """, network: .metered),
        NmcliRow(name: "unknown metered state counts as unmetered", output: """
            GENERAL.TYPE:ethernet
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:unknown
            """, network: .unmetered),
        NmcliRow(name: "nothing connected", output: """
            GENERAL.TYPE:wifi
            GENERAL.STATE:30 (disconnected)
            GENERAL.METERED:unknown

            GENERAL.TYPE:loopback
            GENERAL.STATE:100 (connected (externally))
            GENERAL.METERED:no
            """, network: .offline),
        NmcliRow(name: "blocks without blank lines between them", output: """
            GENERAL.TYPE:ethernet
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:no
            GENERAL.TYPE:wifi
            GENERAL.STATE:100 (connected)
            GENERAL.METERED:yes
            """, network: .metered),
    ]

    @Test("NetworkManager's metered state from nmcli's terse output", arguments: nmcliRows)
    func nmcli(_ row: NmcliRow) {
        #expect(SystemConditionProbe.network(fromNmcli: row.output) == row.network)
    }

    /// A fake `/sys/class/power_supply`: each supply a folder of one-line files.
    static func powerTree(_ supplies: [String: [String: String]]) throws -> TemporaryDirectory {
        let root = TemporaryDirectory("ferry-sysfs")
        for (name, values) in supplies {
            try FileManager.default.createDirectory(atPath: root.child(name), withIntermediateDirectories: true)
            for (file, value) in values {
                try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: root.child(name + "/" + file)))
            }
        }
        return root
    }

    struct PowerRow: Sendable, CustomTestStringConvertible {
        var name: String
        var supplies: [String: [String: String]]
        var power: ConditionReading.Power
        var testDescription: String { name }
    }

    static let powerRows: [PowerRow] = [
        PowerRow(name: "a laptop on its charger", supplies: [
            "AC": ["type": "Mains", "online": "1"], "BAT0": ["type": "Battery", "capacity": "55", "status": "Charging"],
        ], power: .init(onMains: true, batteryPercent: 55)),
        PowerRow(name: "a laptop on battery", supplies: [
            "AC": ["type": "Mains", "online": "0"], "BAT0": ["type": "Battery", "capacity": "42", "status": "Discharging"],
        ], power: .init(onMains: false, batteryPercent: 42)),
        PowerRow(name: "two batteries: their mean", supplies: [
            "ADP1": ["type": "Mains", "online": "0"], "BAT0": ["type": "Battery", "capacity": "20", "status": "Discharging"],
            "BAT1": ["type": "Battery", "capacity": "60", "status": "Discharging"],
        ], power: .init(onMains: false, batteryPercent: 40)),
        PowerRow(name: "a mouse's battery does not count", supplies: [
            "hidpp_battery_0": ["type": "Battery", "capacity": "5", "status": "Discharging", "scope": "Device"],
        ], power: .init(onMains: true, batteryPercent: nil)),
        PowerRow(name: "a desktop: no supply at all", supplies: [:], power: .init(onMains: true, batteryPercent: nil)),
        PowerRow(name: "no mains supply listed: the battery's status says", supplies: [
            "BAT0": ["type": "Battery", "capacity": "90", "status": "Full"],
        ], power: .init(onMains: true, batteryPercent: 90)),
        PowerRow(name: "USB-C charging", supplies: [
            "ucsi-source-psy-USBC000:001": ["type": "USB", "online": "1"],
            "BAT0": ["type": "Battery", "capacity": "10", "status": "Charging"],
        ], power: .init(onMains: true, batteryPercent: 10)),
    ]

    @Test("the power supply from a fake sysfs tree", arguments: powerRows)
    func power(_ row: PowerRow) throws {
        let tree = try Self.powerTree(row.supplies)
        #expect(SystemConditionProbe(powerSupplyRoot: tree.path, searchPath: "").readPower() == row.power)
    }

    @Test("without nmcli on PATH and no network_command, the network cannot be judged and the folder waits")
    func noNmcli() async throws {
        let empty = TemporaryDirectory("ferry-path")
        let probe = SystemConditionProbe(powerSupplyRoot: empty.path, searchPath: empty.path)
        let reading = await probe.read(for: RunConditions(network: .unmetered))
        guard case let .unknown(why)? = reading.network else {
            Issue.record("expected unknown, got \(String(describing: reading.network))")
            return
        }
        #expect(why.contains("nmcli not found"))
        #expect(await probe.waiting(for: RunConditions(network: .unmetered)) != nil)
        #expect(await probe.waiting(for: RunConditions()) == nil)
    }

    @Test("a network_command runs with the probe's PATH: its exit status decides; one that hangs counts as unknown, and is killed")
    func networkCommand() async throws {
        let empty = TemporaryDirectory("ferry-path")
        // Commands that end are given all the time they need: a loaded machine may take
        // longer than any short bound to start a shell.
        let finishing = SystemConditionProbe(powerSupplyRoot: empty.path, searchPath: "/usr/bin:/bin", commandTimeout: .seconds(120))
        #expect(await finishing.readNetwork(command: "exit 0") == .unmetered)
        #expect(await finishing.readNetwork(command: "head -c 300000 /dev/zero; exit 4") == .refused(status: 4))
        // The hanging command writes its pid first (whole, by a rename), so the test can see
        // it was killed. A bound that ends before the shell started its child proves nothing
        // about the child: then the case is tried again with a longer bound, until the child
        // was there to be killed. The outcome asserted never depends on the bound.
        let pidFile = empty.child("pid")
        var bound = 300
        var reading: ConditionReading.Network
        repeat {
            let probe = SystemConditionProbe(powerSupplyRoot: empty.path, searchPath: "/usr/bin:/bin",
                                             commandTimeout: .milliseconds(bound))
            // Not exec'd: the sleep is the shell's child, and must go with it.
            reading = await probe.readNetwork(command: "sleep 600 & echo $! > \(pidFile).new && mv \(pidFile).new \(pidFile); wait")
            bound *= 4
        } while !FileManager.default.fileExists(atPath: pidFile) && bound < 1_000_000
        guard case let .unknown(why) = reading else {
            Issue.record("expected unknown, got \(reading)")
            return
        }
        #expect(why.contains("did not finish"))
        let pid = try #require(Int32(String(decoding: try Data(contentsOf: URL(fileURLWithPath: pidFile)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Killed at once; gone (or a zombie waiting for its new parent) within the guard.
        func ended() -> Bool {
            guard kill(pid, 0) == 0 else { return true }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        var waited = 0
        while !ended() && waited < 6000 {
            usleep(10_000)
            waited += 1
        }
        #expect(ended(), "the command still runs")
    }

    @Test("a short command's output is read whole, its exit status and a signal reported; a missing program gives nil")
    func shortCommand() {
        let printed = ShortCommand.run(["/bin/sh", "-c", "printf 'a\\nb'; head -c 200000 /dev/zero | tr '\\0' x; exit 3"],
                                       environment: nil, timeout: 60)
        #expect(printed?.status == 3)
        #expect(printed?.output.hasPrefix("a\nb") == true)
        #expect(printed?.output.count == 3 + 200_000)
        #expect(ShortCommand.run(["/bin/sh", "-c", "kill -TERM $$"], environment: nil, timeout: 60)?.status == 128 + SIGTERM)
        #expect(ShortCommand.run(["/nonexistent/program"], environment: nil, timeout: 60) == nil)
    }
}
