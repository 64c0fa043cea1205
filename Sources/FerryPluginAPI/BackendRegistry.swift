/// The backend types Ferry knows, keyed by the `type:` of a remote in config.yml.
public struct BackendRegistry: Sendable {
    public private(set) var plugins: [BackendPlugin] = []
    /// Types resolved by prefix (`exec:NAME`), for plugins Ferry finds only when asked.
    public private(set) var families: [BackendPluginFamily] = []

    public init(_ plugins: [BackendPlugin] = [], families: [BackendPluginFamily] = []) {
        for plugin in plugins { register(plugin) }
        self.families = families
    }

    /// Adds a plugin; a later registration of the same type replaces the earlier one.
    public mutating func register(_ plugin: BackendPlugin) {
        plugins.removeAll { $0.type == plugin.type }
        plugins.append(plugin)
    }

    public func plugin(forType type: String) -> BackendPlugin? {
        if let plugin = plugins.first(where: { $0.type == type }) { return plugin }
        for family in families where type.hasPrefix(family.prefix) {
            let name = String(type.dropFirst(family.prefix.count))
            if !name.isEmpty { return family.plugin(name) }
        }
        return nil
    }

    public func plugin(forScheme scheme: String) -> BackendPlugin? {
        plugins.first { $0.urlSchemes.contains(scheme.lowercased()) }
    }

    public var barePathPlugin: BackendPlugin? {
        plugins.first { $0.acceptsBarePaths }
    }

    /// The built-in types, then one `PREFIX NAME` pattern per family (for messages).
    public var typeNames: [String] { plugins.map(\.type) + families.map { $0.prefix + "NAME" } }
}

/// A set of backend types under one prefix, such as `exec:` for external plugins: the
/// part after the prefix names the plugin, and `plugin` builds its description on demand.
public struct BackendPluginFamily: Sendable {
    public var prefix: String
    public var summary: String
    public var plugin: @Sendable (String) -> BackendPlugin?

    public init(prefix: String, summary: String, plugin: @escaping @Sendable (String) -> BackendPlugin?) {
        self.prefix = prefix
        self.summary = summary
        self.plugin = plugin
    }
}
