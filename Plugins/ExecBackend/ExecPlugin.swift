import FerryPluginAPI
import Foundation

extension ExecBackend {
    /// Options Ferry reads itself; every other key of an `exec:` remote goes to the plugin.
    static let ferryOptions: [BackendPlugin.Option] = [
        .init("path", .path, summary: "a folder for the plugin's data, passed on as an absolute path (relative to config.yml)"),
        .init("plugin_dir", .path, summary: "a folder searched first for ferry-backend-NAME"),
        .init("stall_timeout", .integer, summary: "seconds a request may go without a reply or progress before it is retried (default 60)"),
        .init("concurrency", .integer, summary: "at most this many requests at once (default: what the plugin says)"),
        .init(PluginEnvironment.passOption, .string,
              summary: "environment variables the plugin gets beyond the base set and those named by *_env options (NAME, NAME_*)"),
    ]
    /// Ferry's own options that are not passed on (`path` is, made absolute).
    static let reservedOptions = Set(ferryOptions.map(\.name)).subtracting(["path"])

    /// `type: exec:NAME` for every NAME: the executable is looked for when a remote is used.
    public static let family = BackendPluginFamily(
        prefix: "exec:",
        summary: "an external plugin: the executable ferry-backend-NAME, speaking docs/plugin-protocol.md"
    ) { name in
        guard PluginExecutable.isValidName(name) else { return nil }
        return plugin(named: name)
    }

    static func plugin(named name: String) -> BackendPlugin {
        BackendPlugin(
            type: "exec:" + name, summary: "external plugin \(PluginExecutable.prefix)\(name)", options: ferryOptions,
            capabilities: BackendCapabilities(), acceptsOtherOptions: true,
            make: { settings throws(BackendError) in try ExecBackend(name: name, settings: settings) })
    }

    /// A backend for a configured `exec:NAME` remote.
    public convenience init(name: String, settings: BackendSettings,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(BackendError) {
        let folders = PluginExecutable.searchFolders(extra: settings.options["plugin_dir"].map { [$0] } ?? [],
                                                     environment: environment)
        guard let executable = PluginExecutable.find(name, in: folders) else {
            throw BackendError(.notFound, "no executable \(PluginExecutable.prefix)\(name) in plugin_dir, $FERRY_PLUGIN_PATH, "
                + "~/.config/ferry/plugins or $PATH; install it in one of them or set plugin_dir", retryable: false)
        }
        var stallTimeout = Duration.seconds(60)
        if let text = settings.options["stall_timeout"] {
            guard let seconds = Int(text), seconds >= 1 else {
                throw BackendError(.invalidName, "stall_timeout must be a whole number of seconds, at least 1 (got '\(text)')")
            }
            stallTimeout = .seconds(seconds)
        }
        var concurrency: Int?
        if let text = settings.options["concurrency"] {
            guard let value = Int(text), value >= 1 else {
                throw BackendError(.invalidName, "concurrency must be a whole number, at least 1 (got '\(text)')")
            }
            concurrency = value
        }
        let forwarded = settings.options.filter { !Self.reservedOptions.contains($0.key) }
        self.init(name: name, executable: executable,
                  settings: Settings(remoteName: settings.remoteName, options: forwarded, stallTimeout: stallTimeout,
                                     concurrency: concurrency,
                                     environment: PluginEnvironment.forRemote(options: settings.options, from: environment)))
    }

    /// Runs a plugin only to read its hello (name, version, protocol, capabilities).
    public static func introduce(executable: String, timeout: Duration = .seconds(10)) async throws(BackendError) -> PluginHello {
        let name = String((executable as NSString).lastPathComponent.dropFirst(PluginExecutable.prefix.count))
        let launch = PluginConnection.Launch(executable: executable, remoteName: "", options: [:], stallTimeout: timeout,
                                             environment: PluginEnvironment.base(from: ProcessInfo.processInfo.environment),
                                             logger: .init(label: "ferry.plugin.\(name)"))
        return try await PluginConnection.introduce(launch)
    }
}
