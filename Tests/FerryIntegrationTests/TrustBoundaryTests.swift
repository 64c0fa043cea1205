import FerryTestSupport
import Foundation
import Testing

/// What a config file and a plugin may do (docs/config.md, "Which config file";
/// docs/plugin-protocol.md, "Environment").
@Suite("trust boundaries: config files and plugins", .integration)
struct TrustBoundaryTests {
    /// `scripts/test-plugins/ferry-backend-envdump`: writes its environment into the file
    /// its remote's option `dump` names.
    static let pluginFolder = TestServer.repositoryRoot + "/scripts/test-plugins"

    @Test("a plugin gets the base environment and what its own remote names, not the other remotes' secrets")
    func pluginEnvironment() async throws {
        let work = Workspace()
        let dump = work.directory.child("environment.json")
        try """
            remotes:
              nas:
                type: webdav
                url: http://127.0.0.1:9/dav/
                user: me
                password_env: FERRY_NAS_PASSWORD
              vault:
                type: exec:envdump
                plugin_dir: \(Self.pluginFolder)
                dump: \(dump)
                token_env: VAULT_TOKEN
                pass_env: AWS_*, EXTRA_SETTING
            """.write(toFile: work.directory.child("config.yml"), atomically: true, encoding: .utf8)
        let run = try await work.ferry(["ls", "vault"], environment: [
            "FERRY_NAS_PASSWORD": "nas-secret", "VAULT_TOKEN": "vault-token", "AWS_ACCESS_KEY_ID": "key",
            "AWS_SECRET_ACCESS_KEY": "secret", "EXTRA_SETTING": "x", "UNRELATED_SECRET": "nope", "LC_ALL": "C.UTF-8",
        ])
        #expect(run.status == 0, "\(run.diagnostics)")
        let dumped = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dump)))
        let environment = try #require(dumped as? [String: String])
        #expect(environment["VAULT_TOKEN"] == "vault-token")
        #expect(environment["AWS_ACCESS_KEY_ID"] == "key" && environment["AWS_SECRET_ACCESS_KEY"] == "secret")
        #expect(environment["EXTRA_SETTING"] == "x")
        #expect(environment["PATH"] != nil && environment["LC_ALL"] == "C.UTF-8")
        #expect(environment["FERRY_NAS_PASSWORD"] == nil, "another remote's password reached the plugin")
        #expect(environment["UNRELATED_SECRET"] == nil)
    }

    @Test("a config file others can change is refused with how to allow it; FERRY_TRUST_CONFIG=1 reads it")
    func configWritableByOthers() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 10, seed: 1)
        let config = work.directory.child("config.yml")
        try "transfers:\n  max: 2\n".write(toFile: config, atomically: true, encoding: .utf8)
        #expect(chmod(config, 0o666) == 0)
        let refused = try await work.ferry(["push", work.source, "--to", work.destination, "--state", work.state])
        #expect(refused.status == 2, "\(refused.diagnostics)")
        #expect(refused.standardError.contains("writable by every user") && refused.standardError.contains("chmod go-w")
                && refused.standardError.contains("FERRY_TRUST_CONFIG=1"), "\(refused.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.destination))

        let trusted = try await work.ferry(["push", work.source, "--to", work.destination, "--state", work.state],
                                           environment: ["FERRY_TRUST_CONFIG": "1"])
        #expect(trusted.status == 0, "\(trusted.diagnostics)")

        // Another user's file, even read-only, is refused the same way.
        #expect(chmod(config, 0o644) == 0)
        #expect(chown(config, 65534, 65534) == 0)
        let foreign = try await work.ferry(["status", "--state", work.state])
        #expect(foreign.status == 2, "\(foreign.diagnostics)")
        #expect(foreign.standardError.contains("belongs to another user"), "\(foreign.diagnostics)")
    }

    @Test("a plugin executable others can change is not run")
    func pluginWritableByOthers() async throws {
        let work = Workspace()
        let plugins = work.directory.child("plugins")
        let dump = work.directory.child("environment.json")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        // A copy others may change (it is refused before it could be run, so the copy's
        // descriptor never meets an exec).
        try FileManager.default.copyItem(atPath: Self.pluginFolder + "/ferry-backend-envdump",
                                         toPath: plugins + "/ferry-backend-envdump")
        #expect(chmod(plugins + "/ferry-backend-envdump", 0o777) == 0)
        try "remotes:\n  vault:\n    type: exec:envdump\n    plugin_dir: plugins\n    dump: \(dump)\n"
            .write(toFile: work.directory.child("config.yml"), atomically: true, encoding: .utf8)
        let run = try await work.ferry(["ls", "vault"])
        #expect(run.status != 0, "\(run.diagnostics)")
        #expect(run.standardError.contains("refusing to run plugin") && run.standardError.contains("writable by every user"),
                "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: dump), "the plugin ran")
    }

    @Test("a password inside a refused URL is not repeated in the error", arguments: [
        ["push", "src", "--to", "dav://me:hunter2@nas.invalid/dav"],
        ["ls", "https://me:hunter2@nas.invalid/x"],
        ["ls", "me:hunter2@nas.invalid"],
        ["ls", "file://me:hunter2@x/nowhere"],
        ["ls", "configured"],
    ])
    func passwordInURL(_ arguments: [String]) async throws {
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        try "remotes:\n  configured:\n    type: webdav\n    url: me:hunter2@nas.invalid/dav\n"
            .write(toFile: work.directory.child("config.yml"), atomically: true, encoding: .utf8)
        let run = try await work.ferry(arguments + ["--state", work.state])
        #expect(run.status != 0, "\(run.diagnostics)")
        #expect(!(run.standardError + run.standardOutput).contains("hunter2"), "\(run.diagnostics)")
    }

    @Test("basic credentials over plain http:// are warned about; to this machine they are not")
    func plainTextWarning() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        try """
            remotes:
              far:
                type: webdav
                url: http://nas.invalid/dav
                user: ferry
                password_env: NAS_PASSWORD
              near:
                type: webdav
                url: \(server.url("/private/"))
                user: ferry
                password_env: NAS_PASSWORD
            """.write(toFile: work.directory.child("config.yml"), atomically: true, encoding: .utf8)
        let far = try await work.ferry(["ls", "far"], environment: ["NAS_PASSWORD": "secret"])
        #expect(far.standardError.contains("remote 'far' sends its password in clear text (basic auth) over plain http://"),
                "\(far.diagnostics)")
        let near = try await work.ferry(["ls", "near"], environment: ["NAS_PASSWORD": "secret"])
        #expect(near.status == 0, "\(near.diagnostics)")
        #expect(!near.standardError.contains("clear text"), "\(near.diagnostics)")
    }
}
