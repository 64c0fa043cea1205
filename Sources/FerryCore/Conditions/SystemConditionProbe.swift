import FerryConfig
import FerryPluginAPI
import FerrySystem
import Foundation

/// Reads what a folder's run conditions need: the power supply from sysfs
/// (`/sys/class/power_supply`) and the network's metered state from NetworkManager (`nmcli`)
/// or the folder's `network_command`. The sysfs root and the `PATH` that `nmcli` is looked
/// up in are injectable, so tests use a fake tree and a fake `nmcli`.
public struct SystemConditionProbe: Sendable {
    public var powerSupplyRoot: String
    /// The search path for `nmcli` (and the `PATH` a `network_command` runs with).
    public var searchPath: String
    /// How long `nmcli` or a `network_command` may take before it counts as a refusal.
    public var commandTimeout: Duration

    /// The environment variable that replaces `/sys/class/power_supply` (for tests).
    public static let powerSupplyRootVariable = "FERRY_POWER_SUPPLY_ROOT"

    public init(powerSupplyRoot: String = "/sys/class/power_supply",
                searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                commandTimeout: Duration = .seconds(10)) {
        self.powerSupplyRoot = powerSupplyRoot
        self.searchPath = searchPath
        self.commandTimeout = commandTimeout
    }

    /// The machine's probe: `FERRY_POWER_SUPPLY_ROOT` replaces `/sys/class/power_supply`
    /// (tests point it at a fake tree), and `nmcli` is looked up on `PATH`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> SystemConditionProbe {
        var probe = SystemConditionProbe(searchPath: environment["PATH"] ?? "/usr/bin:/bin")
        if let root = environment[powerSupplyRootVariable], !root.isEmpty { probe.powerSupplyRoot = root }
        return probe
    }

    /// What a folder waits for ("waiting for mains power (on battery)"), nil when it may run.
    public func waiting(for conditions: RunConditions) async -> String? {
        guard !conditions.isEmpty else { return nil }
        let reasons = RunConditionCheck.unmet(conditions, reading: await read(for: conditions))
        return reasons.isEmpty ? nil : RunConditionCheck.line(reasons)
    }

    /// Reads only what `conditions` need (nothing for a folder without conditions).
    public func read(for conditions: RunConditions) async -> ConditionReading {
        var reading = ConditionReading()
        if conditions.needsPower { reading.power = readPower() }
        if conditions.needsNetwork { reading.network = await readNetwork(command: conditions.networkCommand) }
        return reading
    }

    // MARK: Power

    /// Every supply under the root: mains and USB ones say whether they are online,
    /// batteries their charge and whether they charge. Batteries of devices (a mouse's,
    /// `scope` Device) are left out.
    public func readPower() -> ConditionReading.Power {
        let names = (try? LocalFileSystem.directoryListing(powerSupplyRoot).names) ?? []
        var mainsSeen = false
        var mainsOnline = false
        var charging = false
        var capacities: [Int] = []
        for name in names.sorted() {
            let folder = LocalFileSystem.join(powerSupplyRoot, name)
            guard let type = value(folder, "type") else { continue }
            switch type {
            case "Mains", "USB", "USB_C", "USB_PD", "USB_DCP", "USB_CDP", "USB_ACA", "Wireless":
                mainsSeen = true
                if value(folder, "online") == "1" { mainsOnline = true }
            case "Battery":
                if value(folder, "scope") == "Device" { continue }
                if let capacity = value(folder, "capacity").flatMap(Int.init) { capacities.append(min(100, max(0, capacity))) }
                if let status = value(folder, "status"), ["Charging", "Full", "Not charging"].contains(status) { charging = true }
            default: continue
            }
        }
        let percent = capacities.isEmpty ? nil : capacities.reduce(0, +) / capacities.count
        let onMains = mainsSeen ? mainsOnline : (capacities.isEmpty || charging)
        return ConditionReading.Power(onMains: onMains, batteryPercent: percent)
    }

    private func value(_ folder: String, _ name: String) -> String? {
        guard let data = FileManager.default.contents(atPath: LocalFileSystem.join(folder, name)),
              let text = String(data: data, encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Network

    /// `network_command` when set (exit 0: suitable); otherwise NetworkManager's view of
    /// the connected devices through `nmcli`.
    public func readNetwork(command: String?) async -> ConditionReading.Network {
        if let command {
            guard let result = await run("/bin/sh", ["-c", command]) else {
                return .unknown("network_command did not finish within \(commandTimeout)")
            }
            return result.status == 0 ? .unmetered : .refused(status: result.status)
        }
        guard let nmcli = executable("nmcli") else {
            return .unknown("nmcli not found; set when.network_command")
        }
        guard let result = await run(nmcli, ["-t", "-f", "GENERAL.TYPE,GENERAL.STATE,GENERAL.METERED", "device", "show"]),
              result.status == 0 else {
            return .unknown("nmcli failed (is NetworkManager running?); set when.network_command")
        }
        return Self.network(fromNmcli: result.output)
    }

    /// `nmcli -t -f GENERAL.TYPE,GENERAL.STATE,GENERAL.METERED device show`: one block per
    /// device, `FIELD:value` lines. Metered when a connected device is metered ("yes", or
    /// "yes (guessed)", which NetworkManager advises treating alike); unmetered when every
    /// connected device is "no", "no (guessed)" or "unknown"; offline when none is connected.
    public static func network(fromNmcli output: String) -> ConditionReading.Network {
        var connected = 0
        var metered = false
        var device: [String: String] = [:]
        func finish() {
            defer { device = [:] }
            guard let state = device["GENERAL.STATE"], state.hasPrefix("100"), device["GENERAL.TYPE"] != "loopback" else { return }
            connected += 1
            if device["GENERAL.METERED"]?.hasPrefix("yes") == true { metered = true }
        }
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let colon = line.firstIndex(of: ":") else {
                finish()
                continue
            }
            let key = String(line[..<colon])
            if device[key] != nil { finish() }
            device[key] = String(line[line.index(after: colon)...])
        }
        finish()
        if connected == 0 { return .offline }
        return metered ? .metered : .unmetered
    }

    /// The first executable called `name` on the search path.
    func executable(_ name: String) -> String? {
        for folder in searchPath.split(separator: ":") where !folder.isEmpty {
            let candidate = LocalFileSystem.join(String(folder), name)
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a short command with the probe's `PATH`, its output read; nil when it did not
    /// start or did not finish in time (it is then terminated).
    func run(_ executable: String, _ arguments: [String]) async -> (status: Int32, output: String)? {
        let timeout = commandTimeout.inSeconds
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = searchPath
        environment["LC_ALL"] = "C"
        let finalEnvironment = environment
        return await BlockingIO.run { () -> (status: Int32, output: String)? in
            ShortCommand.run([executable] + arguments, environment: finalEnvironment, timeout: timeout)
                .map { ($0.status, $0.output) }
        }
    }
}
