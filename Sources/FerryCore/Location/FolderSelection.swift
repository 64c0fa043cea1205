import FerryConfig
import FerryEncryption
import FerryEngine
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Turns command-line folder arguments into folder pairs: a configured folder's name, all
/// configured folders of a mode, or an ad-hoc `PATH --to REMOTE` pair where REMOTE is a
/// configured remote (`name` or `name:path`), a URL, or a local path.
public struct FolderSelection: Sendable {
    public var config: Config
    public var registry: BackendRegistry
    public var currentDirectory: String
    /// Where backends keep what they learnt about their servers between runs (nil: they
    /// ask every time).
    public var backendMemory: (any BackendMemory)?

    /// `stateDirectory`: the state folder of the runs these pairs are for, whose
    /// `servers/` folder keeps the backends' memory (`StateFolderBackendMemory`).
    /// `asksServersAgain` (`--full`): what is remembered is not read, only written anew.
    public init(config: Config, registry: BackendRegistry, currentDirectory: String, stateDirectory: String? = nil,
                asksServersAgain: Bool = false) {
        self.config = config
        self.registry = registry
        self.currentDirectory = currentDirectory
        backendMemory = stateDirectory.map { StateFolderBackendMemory(stateDirectory: $0, recalls: !asksServersAgain) }
    }

    public func resolve(folder: String?, remote: String?, mode: SyncMode) throws(SelectionError) -> [FolderPair] {
        let flag = mode == .pull ? "--from" : "--to"
        guard let folder else {
            if remote != nil {
                throw SelectionError("\(flag) needs a local folder: ferry \(mode.rawValue) PATH \(flag) REMOTE")
            }
            let folders = config.folders.filter { $0.mode == mode }
            guard !folders.isEmpty else {
                let source = config.sourceFile.map { "in \($0)" } ?? "(no config.yml found)"
                throw SelectionError("no folder with mode \(mode.rawValue) is configured \(source); "
                    + "name one, or give a pair: ferry \(mode.rawValue) PATH \(flag) REMOTE")
            }
            var pairs: [FolderPair] = []
            for folder in folders { pairs.append(try pair(for: folder, mode: mode)) }
            return pairs
        }
        if remote == nil, let configured = config.folder(named: folder) {
            return [try pair(for: configured, mode: mode)]
        }
        guard let remote else {
            let known = config.folders.map(\.name)
            throw SelectionError("no configured folder named '\(folder)'"
                + (config.sourceFile == nil ? " (no config.yml found; see --config)"
                    : known.isEmpty ? "" : " (folders: \(known.joined(separator: ", ")))")
                + "; for an ad-hoc pair give \(flag) REMOTE")
        }
        let (backend, remoteRoot) = try adHocRemote(remote)
        let localRoot = LocalFileSystem.absolute(folder, relativeTo: currentDirectory)
        // A bare word that is neither a configured folder nor an existing folder here is
        // most likely a mistyped name, not a new folder to send from.
        if mode != .pull && !folder.contains("/") && !folder.hasPrefix(".") && !folder.hasPrefix("~")
            && (try? LocalFileSystem.metadataFollowingLinks(localRoot)) == nil {
            let known = config.folders.map(\.name)
            throw SelectionError("'\(folder)' is neither a configured folder"
                + (config.sourceFile == nil ? " (no config.yml found)"
                    : known.isEmpty ? "" : " (folders: \(known.joined(separator: ", ")))")
                + " nor a local folder here; check the name, or give its path (./\(folder))")
        }
        return [FolderPair(name: "ad-hoc", localRoot: localRoot, backend: backend, remoteRoot: remoteRoot,
                           mode: mode, ignore: [])]
    }

    /// The pairs a command that only looks (`ferry verify`) works on: every configured
    /// folder, one by name, or an ad-hoc `PATH --to REMOTE`; each in its configured mode.
    public func resolveAnyMode(folder: String?, remote: String?) throws(SelectionError) -> [FolderPair] {
        guard let folder else {
            guard remote == nil else { throw SelectionError("--to needs a local folder: PATH --to REMOTE") }
            guard !config.folders.isEmpty else {
                throw SelectionError("no folder is configured; name one, or give a pair: PATH --to REMOTE")
            }
            var pairs: [FolderPair] = []
            for configured in config.folders { pairs.append(try pair(for: configured, mode: configured.mode)) }
            return pairs
        }
        if remote == nil, let configured = config.folder(named: folder) {
            return [try pair(for: configured, mode: configured.mode)]
        }
        return try resolve(folder: folder, remote: remote, mode: .sync)
    }

    func pair(for folder: FolderConfig, mode: SyncMode) throws(SelectionError) -> FolderPair {
        guard let remote = config.remote(named: folder.remote) else {
            throw SelectionError("folder '\(folder.name)' names remote '\(folder.remote)', which is not configured")
        }
        if mode != .pull, !folder.rights.mayWrite {
            throw SelectionError("folder '\(folder.name)' may not write to its remote (remote_rights has no write): "
                + "only ferry pull runs it")
        }
        var pair = FolderPair(name: folder.name, localRoot: folder.localPath, backend: try backend(for: remote),
                              remoteRoot: folder.remotePath, mode: mode, ignore: folder.ignore,
                              conflict: folder.conflict, trash: folder.trash)
        pair.ignoresHiddenNames = folder.ignoresHiddenNames
        pair.localLimit = folder.localLimit
        pair.remoteCheck = folder.remoteCheck ?? FolderPair.standardRemoteCheck(for: mode)
        pair.conditions = folder.conditions
        pair.rights = folder.rights
        pair.retention = folder.retention
        if mode != .pull, pair.savesVersions, !pair.backend.capabilities.serverSideCopy {
            throw SelectionError(Self.cannotKeepVersions(pair))
        }
        return pair
    }

    /// A folder that keeps versions saves each replaced one with a copy made on the server.
    static func cannotKeepVersions(_ pair: FolderPair) -> String {
        "folder '\(pair.name)' keeps versions on its remote, which needs copies made on the server, and "
            + "\(pair.backend.displayName) cannot make them: give the folder delete in remote_rights, or use another remote"
    }

    public func backend(for remote: RemoteConfig) throws(SelectionError) -> any Backend {
        guard let plugin = registry.plugin(forType: remote.type) else {
            throw SelectionError("remote '\(remote.name)' has unknown type '\(remote.type)' (known: \(registry.typeNames.joined(separator: ", ")))")
        }
        do {
            let backend = try plugin.make(BackendSettings(remoteName: remote.name, options: remote.options, memory: backendMemory))
            guard let encryption = remote.encryption else { return backend }
            return try EncryptedBackend(wrapping: backend, settings: encryption, remoteName: remote.name)
        } catch {
            throw SelectionError(Self.naming(remote.name, error.description))
        }
    }

    /// `name`, `name:path`, `scheme://…`, or a local path.
    public func adHocRemote(_ text: String) throws(SelectionError) -> (any Backend, RelativePath) {
        if let remote = config.remote(named: text) {
            return (try backend(for: remote), .root)
        }
        if let colon = text.firstIndex(of: ":"), !text.contains("://"),
           let remote = config.remote(named: String(text[..<colon])) {
            do {
                return (try backend(for: remote), try RelativePath(String(text[text.index(after: colon)...])))
            } catch let error as SelectionError {
                throw error
            } catch {
                throw SelectionError("invalid path in '\(text)': \(error)")
            }
        }
        if let schemeEnd = text.range(of: "://") {
            let scheme = String(text[..<schemeEnd.lowerBound]).lowercased()
            guard let plugin = registry.plugin(forScheme: scheme) else {
                let schemes = registry.plugins.flatMap(\.urlSchemes).map { "\($0)://" }
                throw SelectionError("no backend handles '\(scheme)://' URLs; use one of \(schemes.joined(separator: ", ")), "
                    + "or a configured remote's name")
            }
            if scheme == "file" {
                guard let url = URL(string: text), url.isFileURL else {
                    throw SelectionError("invalid file URL '\(SecretRedaction.redactingPassword(text))'; use file:///absolute/path")
                }
                return try barePath(url.path, plugin: plugin)
            }
            // A space typed in a URL path means a space in the name: send it as %20.
            let url = text.replacingOccurrences(of: " ", with: "%20")
            // The URL names the remote in messages: never with a password in it.
            let shown = SecretRedaction.redactingPassword(url)
            do {
                return (try plugin.make(BackendSettings(remoteName: shown, options: ["url": url], memory: backendMemory)), .root)
            } catch {
                throw SelectionError(Self.naming(shown, error.description))
            }
        }
        // Never a folder named `s3:` or `dav` by mistake (the run would report success).
        if let refusal = RemoteSpelling.refusal(SecretRedaction.redactingPassword(text), remotes: config.remotes.map(\.name),
                                                schemes: registry.plugins.flatMap(\.urlSchemes)) {
            throw SelectionError(refusal)
        }
        let looksLikePath = text.hasPrefix("/") || text.hasPrefix(".") || text.hasPrefix("~") || text.contains("/")
        guard looksLikePath || !text.contains(":"), let plugin = registry.barePathPlugin else {
            let known = config.remotes.map(\.name)
            throw SelectionError("unknown remote '\(SecretRedaction.redactingPassword(text))'"
                + (known.isEmpty ? "" : " (remotes: \(known.joined(separator: ", ")))")
                + "; give a configured remote, a URL, or a local path")
        }
        return try barePath(text, plugin: plugin)
    }

    private func barePath(_ text: String, plugin: BackendPlugin) throws(SelectionError) -> (any Backend, RelativePath) {
        let path = LocalFileSystem.expandingHome(text, environment: ProcessInfo.processInfo.environment)
        let absolute = LocalFileSystem.absolute(path, relativeTo: currentDirectory)
        do {
            return (try plugin.make(BackendSettings(remoteName: text, options: ["path": absolute])), .root)
        } catch {
            throw SelectionError(Self.naming(text, error.description))
        }
    }

    /// "remote 'nas': MESSAGE", unless the message already names it.
    static func naming(_ remote: String, _ message: String) -> String {
        message.contains("'\(remote)'") ? message : "remote '\(remote)': \(message)"
    }
}

/// A folder or remote named on the command line that does not resolve.
public struct SelectionError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
