import FerryCore

/// A folder pair as a person configured it: `./incoming → nas:incoming`. Local paths under
/// the current directory are shown relative to it; a configured folder's remote by the
/// remote's name, an ad-hoc one by its backend's address.
enum PairLabel {
    static func arrow(_ mode: SyncMode) -> String {
        switch mode {
        case .push: return "→"
        case .pull: return "←"
        case .sync: return "⇄"
        }
    }

    static func local(_ path: String, currentDirectory: String) -> String {
        if path == currentDirectory { return "." }
        let prefix = currentDirectory.hasSuffix("/") ? currentDirectory : currentDirectory + "/"
        return path.hasPrefix(prefix) ? "./" + path.dropFirst(prefix.count) : path
    }

    /// `remote:path` for a configured folder; the backend's name and path otherwise.
    static func remote(_ pair: FolderPair, config: Config) -> String {
        if let folder = config.folder(named: pair.name), folder.localPath == pair.localRoot {
            return folder.remotePath.isRoot ? folder.remote : folder.remote + ":" + folder.remotePath.string
        }
        return pair.remoteRoot.isRoot ? pair.backend.displayName : pair.backend.displayName + " " + pair.remoteRoot.string
    }

    /// `typedRemote`: the remote as given on the command line (`--to`), shown as typed.
    static func describe(_ pair: FolderPair, config: Config, currentDirectory: String, typedRemote: String? = nil) -> String {
        "\(local(pair.localRoot, currentDirectory: currentDirectory)) \(arrow(pair.mode)) \(typedRemote ?? remote(pair, config: config))"
    }
}
