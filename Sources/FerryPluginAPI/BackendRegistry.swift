/// The backend types Ferry knows, keyed by the `type:` of a remote in config.yml.
public struct BackendRegistry: Sendable {
    public private(set) var plugins: [BackendPlugin] = []

    public init(_ plugins: [BackendPlugin] = []) {
        for plugin in plugins { register(plugin) }
    }

    /// Adds a plugin; a later registration of the same type replaces the earlier one.
    public mutating func register(_ plugin: BackendPlugin) {
        plugins.removeAll { $0.type == plugin.type }
        plugins.append(plugin)
    }

    public func plugin(forType type: String) -> BackendPlugin? {
        plugins.first { $0.type == type }
    }

    public func plugin(forScheme scheme: String) -> BackendPlugin? {
        plugins.first { $0.urlSchemes.contains(scheme.lowercased()) }
    }

    public var barePathPlugin: BackendPlugin? {
        plugins.first { $0.acceptsBarePaths }
    }

    public var typeNames: [String] { plugins.map(\.type) }
}
