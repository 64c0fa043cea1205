import FerryPluginAPI
import FerrySystem
import Foundation
import Yams

/// Reads config.yml into a `Config`, refusing anything it does not understand: unknown
/// keys, wrong types, missing required keys, remotes that do not exist, options a backend
/// does not take. Each refusal names the file, line, column and key.
public struct ConfigLoader: Sendable {
    public var registry: BackendRegistry

    public init(registry: BackendRegistry) {
        self.registry = registry
    }

    /// Where config.yml is looked for when `--config` is not given: `./config.yml`, then
    /// `$XDG_CONFIG_HOME/ferry/config.yml` (`~/.config/ferry/config.yml`). The first one
    /// means running ferry in a folder runs that folder's config (docs/config.md, "Which
    /// config file"), hence the ownership check in `load`.
    public static func defaultSearchPaths(environment: [String: String], currentDirectory: String) -> [String] {
        var paths = [LocalFileSystem.join(currentDirectory, "config.yml")]
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            paths.append(LocalFileSystem.join(xdg, "ferry/config.yml"))
        } else if let home = environment["HOME"], !home.isEmpty {
            paths.append(LocalFileSystem.join(home, ".config/ferry/config.yml"))
        }
        return paths
    }

    /// A config file larger than this is refused unread: a real one is a few KiB, and a
    /// wrong path (a video, a disk image) must not be read into memory.
    public static let maxFileSize: Int64 = 1 << 20

    /// Loads a config file; relative paths in it are resolved against the file's folder.
    ///
    /// A config file can start any program (an `exec:` remote), so one that another user
    /// can change is refused (`FileTrust`), unless `FERRY_TRUST_CONFIG=1`.
    public func load(file path: String,
                     environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> Config {
        let absolutePath = LocalFileSystem.absolute(path)
        if let reason = FileTrust.distrust(path: absolutePath, environment: environment) {
            throw ConfigError(file: path, message: "refusing to read it: \(reason), and whoever can change it can make ferry "
                + "run any program; run chmod go-w on it and its folder, or set \(FileTrust.overrideVariable)=1 to read it anyway")
        }
        let text: String
        do {
            if let size = try? LocalFileSystem.metadataFollowingLinks(absolutePath)?.size, size > Self.maxFileSize {
                throw ConfigError(file: path, message: "the file is \(size) bytes, larger than a config can be (1 MiB); check the path given to --config")
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: absolutePath))
            guard let decoded = String(data: data, encoding: .utf8) else {
                throw ConfigError(file: path, message: "not UTF-8 text; save the file as UTF-8")
            }
            text = decoded
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError(file: path, message: "cannot read the config file (\(error.localizedDescription)); check the path given to --config")
        }
        return try parse(text, file: path, baseDirectory: LocalFileSystem.parentPath(absolutePath))
    }

    /// Parses config text. `file` is used in messages only.
    public func parse(_ text: String, file: String, baseDirectory: String) throws(ConfigError) -> Config {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Self.syntaxError(error, file: file, text: text)
        } catch {
            throw ConfigError(file: file, message: "not valid YAML: \(error)")
        }
        var reader = ConfigReader(file: file, baseDirectory: baseDirectory, registry: registry)
        guard let root else { return reader.finish() }
        return try reader.read(root)
    }

    static func syntaxError(_ error: YamlError, file: String, text: String = "") -> ConfigError {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            let detail = context.map { "\($0.text) " } ?? ""
            let line = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(max(0, mark.line - 1)).first
            if let line, line.prefix(while: { $0 == " " || $0 == "\t" }).contains("\t") {
                return ConfigError(file: file, line: mark.line, column: mark.column,
                                   message: "a tab in the indentation; YAML indents with spaces only")
            }
            return ConfigError(file: file, line: mark.line, column: mark.column,
                               message: "invalid YAML: \(detail)\(problem)")
        case let .duplicatedKeysInMapping(duplicates, context):
            // Yams points at the mapping; point at the second occurrence of the key instead.
            let key = duplicates.sorted().first ?? ""
            let (line, column) = secondOccurrence(of: key, in: text, from: context.mark)
            return ConfigError(file: file, line: line, column: column, key: key,
                               message: "key appears twice in this mapping; keep one")
        case let .reader(problem, _, _, _):
            return ConfigError(file: file, message: "invalid YAML: \(problem)")
        default:
            return ConfigError(file: file, message: "invalid YAML: \(error)".replacingNewlines())
        }
    }

    /// The line and column of the second `key:` at the mapping's indentation, scanning
    /// from where the mapping starts; the mapping's own position when not found.
    static func secondOccurrence(of key: String, in text: String, from mark: Mark) -> (Int, Int) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let indent = String(repeating: " ", count: max(0, mark.column - 1))
        var seen = 0
        for index in (mark.line - 1)..<lines.count where index >= 0 {
            let line = lines[index]
            for candidate in [indent + key + ":", indent + "\"" + key + "\":", indent + "'" + key + "':"]
                where line.hasPrefix(candidate) {
                seen += 1
                if seen == 2 { return (index + 1, mark.column) }
            }
        }
        return (mark.line, mark.column)
    }
}
