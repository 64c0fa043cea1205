import ArgumentParser
import FerryCore
import FerryEngine
import FerryJournal
import FerryPluginAPI
import FerrySystem

extension Ferry {
    /// Lists one file's versions on an append-only remote (`remote_rights` without
    /// `delete`, docs/when-things-go-wrong.md).
    struct Versions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "versions",
            abstract: "List a file's versions kept on its folder's remote (time, size).",
            discussion: """
                PATH is a file inside a configured folder. Each line is a version, oldest first: \
                the moment (UTC) from which it was the remote's current version, its size, and \
                'current' for the one under the file's name. ferry pull FOLDER --version TIME \
                puts back every file's version that was current at TIME.
                """)

        @Argument(help: "A file inside a configured folder.")
        var path: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let (pair, relative) = try Self.locate(path, context: context)
            let history: VersionHistory
            do {
                history = try await RemoteVersions(pair: pair).history(of: relative)
            } catch {
                throw CommandFailure.runtime("cannot list the versions of \(path): \(error.description)")
            }
            guard !history.versions.isEmpty else {
                throw CommandFailure.runtime("\(path): the remote of \(pair.name) holds no version of it")
            }
            for version in history.versions {
                if global.json {
                    var object = JSONObject()
                    object.add("path", relative.string)
                    object.add("from", VersionTime.format(version.fromMillis))
                    object.add("until", version.untilMillis.map(VersionTime.format))
                    object.add("size", version.size)
                    object.add("current", version.isCurrent)
                    StandardStreams.output(object.text)
                } else {
                    StandardStreams.output(VersionTime.format(version.fromMillis) + "  "
                        + ByteFormat.string(version.size).leftPadded(10) + (version.isCurrent ? "  current" : ""))
                }
            }
        }

        /// The configured folder that holds `path`, and the file's path inside it.
        static func locate(_ path: String, context: CommandContext) throws -> (FolderPair, RelativePath) {
            let absolute = LocalFileSystem.absolute(path, relativeTo: context.currentDirectory)
            let holder = context.config.folders
                .filter { absolute.hasPrefix($0.localPath.hasSuffix("/") ? $0.localPath : $0.localPath + "/") }
                .max { $0.localPath.count < $1.localPath.count }
            guard let folder = holder else {
                throw CommandFailure.usage("\(path) is in no configured folder; ferry versions takes a file inside one")
            }
            let inside = String(absolute.dropFirst(folder.localPath.count)).drop { $0 == "/" }
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            do {
                let pairs = try selection.resolve(folder: folder.name, remote: nil, mode: .pull)
                guard let pair = pairs.first else { throw CommandFailure.usage("no folder named \(folder.name)") }
                return (pair, try RelativePath(String(inside)))
            } catch let error as SelectionError {
                throw CommandFailure.usage(error.message)
            } catch let error as BackendError {
                throw CommandFailure.usage("\(path): \(error.message)")
            }
        }
    }
}

/// `ferry pull FOLDER --version TIME`: every file's version that was current at TIME, put
/// back into the local folder from the remote's versions.
enum VersionRestoreCommand {
    static func run(folder: String?, remote: String?, time text: String, global: GlobalOptions) async throws {
        guard let millis = VersionTime.parse(text) else {
            throw CommandFailure.usage("--version: '\(text)' is no time; give one as ferry versions shows it, "
                + "e.g. 2026-12-05T13:44:55.123Z (UTC), or a date")
        }
        let context = try CommandContext.load(global)
        let selection = FolderSelection(config: context.config, registry: context.registry,
                                        currentDirectory: context.currentDirectory)
        let pairs: [FolderPair]
        do {
            pairs = try selection.resolve(folder: folder, remote: remote, mode: .pull)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        guard let folder, pairs.count == 1, let pair = pairs.first else {
            throw CommandFailure.usage("--version restores one folder: ferry pull FOLDER --version TIME")
        }
        let lock: RunLock
        do {
            guard let journal = try await context.state.existingJournal(),
                  let record = try await journal.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation),
                  let id = record.id else {
                return try await restore(pair, folder: folder, millis: millis, context: context, global: global)
            }
            lock = try RunLock.acquire(stateDirectory: context.stateDirectory, pairId: id)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure.runtime("\(folder) is busy or its journal cannot be read (\(error)); try again when its run ends")
        }
        defer { withExtendedLifetime(lock) {} }
        try await restore(pair, folder: folder, millis: millis, context: context, global: global)
    }

    private static func restore(_ pair: FolderPair, folder: String, millis: Int64, context: CommandContext,
                                global: GlobalOptions) async throws {
        let json = global.json
        let restored: RemoteVersions.Restored
        do {
            restored = try await RemoteVersions(pair: pair).restore(at: millis, bounds: context.config.listingBounds) { path, version in
                if json {
                    var object = JSONObject()
                    object.add("restored", path)
                    object.add("from", VersionTime.format(version.fromMillis))
                    object.add("size", version.size)
                    StandardStreams.output(object.text)
                } else {
                    StandardStreams.output("restored \(path) (version of \(VersionTime.format(version.fromMillis)), "
                        + "\(ByteFormat.string(version.size)))")
                }
            }
        } catch {
            throw CommandFailure.runtime("cannot restore \(folder) as of \(VersionTime.format(millis)): \(error.description)")
        }
        if !json {
            let absent = restored.absentThen.isEmpty ? ""
                : "; \(Plural.count(restored.absentThen.count, "file")) left alone (not on the remote yet then)"
            StandardStreams.output("\(folder): \(Plural.count(restored.files.count, "file")) as of \(VersionTime.format(millis))\(absent)")
        }
    }
}
