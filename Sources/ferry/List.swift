import ArgumentParser
import FerryCore
import FerryPluginAPI
import Foundation

extension Ferry {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List a remote's files: a configured remote (name or name:path), a URL or a path.")

        @Argument(help: "What to list, e.g. nas, nas:photos/2024, dav://host/dav/photos, /mnt/backup.")
        var remote: String

        @Flag(name: [.customShort("R"), .long], help: "List every folder below, one file per line.")
        var recursive = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            let (backend, root): (any Backend, RemotePath)
            do {
                (backend, root) = try selection.adHocRemote(remote)
            } catch {
                throw CommandFailure.usage(error.message)
            }
            let entries: [RemoteEntry]
            do {
                entries = recursive ? try await backend.listTree(root) : try await backend.list(root)
            } catch {
                throw CommandFailure.runtime("cannot list \(remote): \(error.description)")
            }
            for entry in entries.sorted(by: { $0.path < $1.path }) {
                let name = entry.path.relative(to: root)?.string ?? entry.path.string
                if global.json {
                    var object = JSONObject()
                    object.add("path", name)
                    object.add("kind", entry.kind.rawValue)
                    object.add("size", entry.size)
                    object.add("modified", entry.modifiedNanos.map { Date(timeIntervalSince1970: Double($0) / 1e9).ISO8601Format() })
                    object.add("etag", entry.etag)
                    StandardStreams.output(object.text)
                } else {
                    let modified = entry.modifiedNanos
                        .map { Date(timeIntervalSince1970: Double($0) / 1e9).ISO8601Format() } ?? "-"
                    let size = entry.kind == .directory ? "-" : ByteFormat.string(entry.size)
                    StandardStreams.output(size.leftPadded(11) + "  " + modified + "  " + name + (entry.kind == .directory ? "/" : ""))
                }
            }
        }
    }
}
