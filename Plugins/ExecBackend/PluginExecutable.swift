import FerryPluginAPI
import FerrySystem
import Foundation

/// Where external plugins are found: `ferry-backend-NAME` files that can be run, in the
/// folders of a remote's `plugin_dir`, then `$FERRY_PLUGIN_PATH`, then
/// `$XDG_CONFIG_HOME/ferry/plugins` (or `~/.config/ferry/plugins`), then `$PATH`. The
/// first folder that has the file wins.
public enum PluginExecutable {
    public static let prefix = "ferry-backend-"

    /// The folders searched, in order, without duplicates.
    public static func searchFolders(extra: [String] = [], environment: [String: String]) -> [String] {
        var folders = extra
        if let configured = environment["FERRY_PLUGIN_PATH"] {
            folders += configured.split(separator: ":").map(String.init)
        }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            folders.append(config + "/ferry/plugins")
        } else if let home = environment["HOME"], !home.isEmpty {
            folders.append(home + "/.config/ferry/plugins")
        }
        folders += (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        var seen: Set<String> = []
        return folders.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// Whether `name` can be part of an executable's name: letters, digits, `-`, `_`, `.`
    /// (never a slash, so `exec:../x` cannot name a file elsewhere).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && name.unicodeScalars.allSatisfy {
            ($0.value < 0x80 && (CharacterSet.alphanumerics.contains($0))) || $0 == "-" || $0 == "_" || $0 == "."
        }
    }

    /// The path of `ferry-backend-NAME`, or nil when no folder has it.
    public static func find(_ name: String, in folders: [String]) -> String? {
        guard isValidName(name) else { return nil }
        for folder in folders {
            let candidate = LocalFileSystem.join(folder, prefix + name)
            if access(candidate, X_OK) == 0, (try? LocalFileSystem.metadataFollowingLinks(candidate))?.kind == .file {
                return candidate
            }
        }
        return nil
    }

    /// Every plugin in `folders`: name and path, the first of each name, sorted by name.
    public static func discover(in folders: [String]) -> [(name: String, path: String)] {
        var found: [String: String] = [:]
        for folder in folders {
            guard let names = try? LocalFileSystem.directoryEntries(folder) else { continue }
            for file in names where file.hasPrefix(prefix) {
                let name = String(file.dropFirst(prefix.count))
                if found[name] == nil, let path = find(name, in: [folder]) { found[name] = path }
            }
        }
        return found.sorted { $0.key < $1.key }.map { (name: $0.key, path: $0.value) }
    }
}
