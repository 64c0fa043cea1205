import FerryTestSupport
import Foundation
import Testing

/// Run conditions (`when:`) end to end: the `ferry` binary with a fake sysfs power tree
/// (`FERRY_POWER_SUPPLY_ROOT`) and a fake `nmcli` first on `PATH`, against nginx's WebDAV.
@Suite("run conditions: manual runs and the daemon", .integration)
struct RunConditionRunTests {
    /// A fake `/sys/class/power_supply` with a mains adapter and one battery.
    final class PowerTree: Sendable {
        let directory = TemporaryDirectory("ferry-sysfs")

        init(mains: Bool, battery: Int) throws {
            try set(mains: mains, battery: battery)
        }

        func set(mains: Bool, battery: Int) throws {
            let values = [("AC/type", "Mains"), ("AC/online", mains ? "1" : "0"), ("BAT0/type", "Battery"),
                          ("BAT0/capacity", "\(battery)"), ("BAT0/status", mains ? "Charging" : "Discharging")]
            for (file, value) in values {
                let path = directory.child(file)
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
        }
    }

    /// A folder with an executable `nmcli` that prints a wifi device, metered or not.
    static func fakeNmcli(metered: Bool) throws -> TemporaryDirectory {
        let bin = TemporaryDirectory("ferry-bin")
        let script = """
            #!/bin/sh
            [ "$1 $2 $3" = "-t -f GENERAL.TYPE,GENERAL.STATE,GENERAL.METERED" ] || exit 2
            printf 'GENERAL.TYPE:wifi\\nGENERAL.STATE:100 (connected)\\nGENERAL.METERED:\(metered ? "yes" : "no") (guessed)\\n'
            """
        let path = bin.child("nmcli")
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return bin
    }

    static func config(_ work: Workspace, _ server: TestServer, when: String, extra: String = "") throws {
        let text = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/camera"))
            folders:
              camera:
                path: src
                remote: nas
                when: \(when)
            \(extra)
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
    }

    static func photos(_ work: Workspace, count: Int = 3) throws {
        for index in 0..<count {
            try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 3000, seed: UInt64(index))
        }
    }

    static func remoteNames(_ server: TestServer) -> Set<String> {
        Set((try? TreeComparison.files(in: server.directory + "/root/camera"))?.keys.map { $0 } ?? [])
    }

    @Test("on battery a manual push says why in one line, exits 0 and moves nothing; --now or mains power runs it")
    func powerCondition() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let power = try PowerTree(mains: false, battery: 80)
        let environment = ["FERRY_POWER_SUPPLY_ROOT": power.directory.path]
        try Self.config(work, server, when: "{ power: ac }")
        try Self.photos(work)

        let waiting = try await work.ferry(["push", "camera", "--state", work.state], environment: environment)
        #expect(waiting.status == 0, "\(waiting.diagnostics)")
        let lines = waiting.standardOutput.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.contains("push camera: waiting for mains power (on battery)") == true,
                "\(waiting.diagnostics)")
        #expect(Self.remoteNames(server).isEmpty)
        let json = try await work.ferry(["push", "camera", "--state", work.state, "--json"], environment: environment)
        #expect(json.status == 0 && (json.summary?["waiting_for"] as? String)?.contains("mains power") == true, "\(json.diagnostics)")
        #expect(json.int("uploaded") == 0)

        let status = try await work.ferry(["status", "camera", "--state", work.state, "--json"], environment: environment)
        #expect(status.standardOutput.contains("\"waiting_for\":\"waiting for mains power (on battery)\""), "\(status.diagnostics)")

        let forced = try await work.ferry(["push", "camera", "--state", work.state, "--json", "--now"], environment: environment)
        #expect(forced.status == 0 && forced.int("uploaded") == 3, "\(forced.diagnostics)")

        try TreeGenerator.write(at: work.source + "/IMG_9.jpg", size: 100, seed: 9)
        try power.set(mains: true, battery: 10)
        let plugged = try await work.ferry(["push", "camera", "--state", work.state, "--json"], environment: environment)
        #expect(plugged.status == 0 && plugged.int("uploaded") == 1, "\(plugged.diagnostics)")
        #expect(Self.remoteNames(server).count == 4)
    }

    @Test("a low battery holds a run back; the charge is read from sysfs")
    func batteryCondition() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let power = try PowerTree(mains: false, battery: 20)
        let environment = ["FERRY_POWER_SUPPLY_ROOT": power.directory.path]
        try Self.config(work, server, when: "{ min_battery: 30% }")
        try Self.photos(work, count: 1)
        let low = try await work.ferry(["push", "camera", "--state", work.state], environment: environment)
        #expect(low.status == 0 && low.standardOutput.contains("waiting for the battery to reach 30% (at 20%)"), "\(low.diagnostics)")
        try power.set(mains: false, battery: 31)
        let enough = try await work.ferry(["push", "camera", "--state", work.state, "--json"], environment: environment)
        #expect(enough.int("uploaded") == 1, "\(enough.diagnostics)")
    }

    @Test("a metered network (NetworkManager through nmcli) holds a run back; an unmetered one lets it go")
    func meteredNetwork() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        try Self.config(work, server, when: "{ network: unmetered }")
        try Self.photos(work, count: 2)
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let metered = try Self.fakeNmcli(metered: true)
        let held = try await work.ferry(["push", "camera", "--state", work.state],
                                        environment: ["PATH": metered.path + ":" + path])
        #expect(held.status == 0 && held.standardOutput.contains("waiting for an unmetered network (the connection is metered)"),
                "\(held.diagnostics)")
        #expect(Self.remoteNames(server).isEmpty)
        let unmetered = try Self.fakeNmcli(metered: false)
        let sent = try await work.ferry(["push", "camera", "--state", work.state, "--json"],
                                        environment: ["PATH": unmetered.path + ":" + path])
        #expect(sent.status == 0 && sent.int("uploaded") == 2, "\(sent.diagnostics)")
    }

    @Test("where NetworkManager does not run, network_command decides: exit 0 means suitable")
    func networkCommand() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let flag = work.directory.child("on-wifi")
        try Self.config(work, server, when: "{ network: unmetered, network_command: 'test -e \(flag)' }")
        try Self.photos(work, count: 1)
        let held = try await work.ferry(["push", "camera", "--state", work.state])
        #expect(held.status == 0 && held.standardOutput.contains("network_command exited with status 1"), "\(held.diagnostics)")
        _ = FileManager.default.createFile(atPath: flag, contents: Data())
        let sent = try await work.ferry(["push", "camera", "--state", work.state, "--json"])
        #expect(sent.int("uploaded") == 1, "\(sent.diagnostics)")
    }

    @Test("the daemon waits while on battery (its status file and ferry status say why), keeps what it saw, and sends it on mains power")
    func daemonWaits() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let power = try PowerTree(mains: false, battery: 80)
        try Self.config(work, server, when: "{ power: ac }", extra: "watch:\n  quiet_period: 200ms\n  condition_interval: 1s\n")
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let daemon = try FerryProcess(["daemon", "--state", work.state, "--json"], in: work.directory.path,
                                      environment: ["FERRY_POWER_SUPPLY_ROOT": power.directory.path])
        defer { daemon.stopIfRunning() }
        let statusFile = work.state + "/daemon-status.json"
        await when({ ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "").contains("waiting for mains power") })
        // Files arrive while it waits: watched, kept, not sent.
        try Self.photos(work, count: 2)
        let status = try await work.ferry(["status", "camera", "--state", work.state],
                                          environment: ["FERRY_POWER_SUPPLY_ROOT": power.directory.path])
        #expect(status.standardOutput.contains("waiting for mains power (on battery)"), "\(status.diagnostics)")
        #expect(Self.remoteNames(server).isEmpty)

        try power.set(mains: true, battery: 80)
        await when({ Self.remoteNames(server) == ["IMG_0.jpg", "IMG_1.jpg"] })
        await when({ !((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "waiting").contains("waiting for mains") })
        daemon.send(SIGTERM)
        let result = await daemon.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
    }
}
