import FerryConfig
import FerryEngine
import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// The names a folder pair leaves alone: the built-in ignores, the config's and the
/// folder's patterns, a sync folder's trash kept inside it under another name, and the
/// state folder when it lies inside the synced folder (`--state photos/.ferry-state`).
///
/// One list for everything that looks at the folder — a run's scan, the watcher, the
/// daemon's feed of new files, `verify` — so that none of them sends the live journal or
/// takes Ferry's own files for the user's.
public enum PairIgnores {
    public static func patterns(pair: FolderPair, config: Config, stateDirectory: String) -> [String] {
        ScanSettings.builtInIgnores + config.scan.ignore + pair.ignore + trashFolder(pair)
            + stateFolder(pair, stateDirectory: stateDirectory)
    }

    public static func globSet(pair: FolderPair, config: Config, stateDirectory: String) throws(GlobPattern.SyntaxError) -> GlobSet {
        try GlobSet(patterns(pair: pair, config: config, stateDirectory: stateDirectory))
    }

    /// The local trash folder when it lies inside the folder under a name other than the
    /// built-in `.ferry-trash` (which the built-in ignores cover).
    static func trashFolder(_ pair: FolderPair) -> [String] {
        guard pair.mode == .sync else { return [] }
        let folder = pair.trash.localFolder(root: pair.localRoot)
        guard folder.hasPrefix(pair.localRoot + "/") else { return [] }
        let relative = GlobPattern.escaped(String(folder.dropFirst(pair.localRoot.count + 1)))
        return relative == TrashSettings.folderName ? [] : ["/" + relative, "/" + relative + "/**"]
    }

    /// The state folder (journal, locks, catalogs, bundle work files) when it lies inside
    /// the synced folder: a push must not send the live journal, and a pull must not
    /// overwrite it with an old copy.
    static func stateFolder(_ pair: FolderPair, stateDirectory: String) -> [String] {
        let root = LocalFileSystem.resolvedPath(pair.localRoot) ?? LocalFileSystem.absolute(pair.localRoot)
        let state = LocalFileSystem.resolvedPath(stateDirectory) ?? LocalFileSystem.absolute(stateDirectory)
        let prefix = root == "/" ? "/" : root + "/"
        guard state.hasPrefix(prefix) else { return [] }
        let relative = GlobPattern.escaped(String(state.dropFirst(prefix.count)))
        return ["/" + relative, "/" + relative + "/**"]
    }
}
