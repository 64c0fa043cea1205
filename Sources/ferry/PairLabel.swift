import FerryConfig
import FerryCore
import FerryEngine
import FerryPlanning

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
        return typable(remoteLocation: pair.remoteLocation)
    }

    /// An ad-hoc pair's remote as a person would type it after `--to`: `/backup/photos`,
    /// `dav://nas:8080/dav/phone`, `https://host/files/phone`, from the journal's
    /// `BACKEND#PATH` identity (`local:/backup#photos`, `webdav:http://nas:8080/dav/#phone`).
    static func typable(remoteLocation: String) -> String {
        let parts = remoteLocation.split(separator: "#", maxSplits: 1).map(String.init)
        let backend = parts[0]
        let path = parts.count > 1 ? parts[1] : ""
        func joined(_ base: String) -> String {
            guard !path.isEmpty else { return base }
            return base.hasSuffix("/") ? base + path : base + "/" + path
        }
        if backend.hasPrefix("local:") { return joined(String(backend.dropFirst("local:".count))) }
        if backend.hasPrefix("webdav:http://") { return joined("dav://" + backend.dropFirst("webdav:http://".count)) }
        if backend.hasPrefix("webdav:https://") { return joined("davs://" + backend.dropFirst("webdav:https://".count)) }
        if backend.hasPrefix("http:http") { return joined(String(backend.dropFirst("http:".count))) }
        return path.isEmpty ? backend : backend + " " + path
    }

    /// `typedRemote`: the remote as given on the command line (`--to`), shown as typed.
    static func describe(_ pair: FolderPair, config: Config, currentDirectory: String, typedRemote: String? = nil) -> String {
        "\(local(pair.localRoot, currentDirectory: currentDirectory)) \(arrow(pair.mode)) \(typedRemote ?? remote(pair, config: config))"
    }
}
