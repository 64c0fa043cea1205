import ArchiveCodec
import ArgumentParser
import FerryConfig
import FerryCore
import FerryEngine
import FerryPluginAPI
import FerrySystem
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

        @Flag(help: "Also list the members of archive files (.zip, .tar.*, .7z, Ferry's bundles), read with libarchive.")
        var archiveContents = false

        @Flag(help: "Answer from what Ferry last saw of the remote (the journal), without asking the server.")
        var cached = false

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
            let shown = SecretRedaction.redactingPassword(remote)
            var entries: [RemoteEntry]
            // Set when the answer comes from the journal: since when it holds.
            var asOf: Double??
            if cached {
                guard let answer = try await Self.fromJournal(backend, root, recursive: recursive, context: context) else {
                    throw CommandFailure.usage("the journal knows nothing of \(shown): no folder syncs with it; list it without --cached")
                }
                (entries, asOf) = (answer.entries, .some(answer.asOf))
            } else {
                do {
                    entries = recursive ? try await backend.listTree(root, bounds: context.config.listingBounds) : try await backend.list(root)
                } catch {
                    // A server out of reach: what Ferry last saw of it, said to be that.
                    guard error.suggestsOutage || error.code == .unreachable,
                          let answer = try await Self.fromJournal(backend, root, recursive: recursive, context: context) else {
                        throw CommandFailure.runtime("cannot list \(shown): \(error.description)")
                    }
                    StandardStreams.error("ferry: \(shown) cannot be reached (\(error.message)); listing what Ferry last saw of it")
                    (entries, asOf) = (answer.entries, .some(answer.asOf))
                }
            }
            if let asOf {
                let when = asOf.map { Date(timeIntervalSince1970: $0).ISO8601Format() } ?? "an unknown time"
                StandardStreams.error("ferry: as of \(when) (\(cached ? "from the journal" : "offline")); "
                    + "files added or changed on the remote since are not shown")
            }
            // Saved versions are shown by `ferry versions`, not as files of the folder; a
            // listing of the versions folder itself (nas:photos/.ferry-versions) shows them.
            entries.removeAll { entry in
                entry.path.relative(to: root)?.components.contains(VersionName.folderName) ?? false
            }
            // Made only when an archive is listed, private to this user (never a name another
            // user could plant beforehand), removed afterwards.
            var scratchFolder: String?
            defer { if let scratchFolder { try? FileManager.default.removeItem(atPath: scratchFolder) } }
            func scratch() throws(SystemError) -> String {
                if let scratchFolder { return scratchFolder }
                let made = try LocalFileSystem.makePrivateTemporaryDirectory(in: FileManager.default.temporaryDirectory.path,
                                                                              prefix: "ferry-ls-")
                scratchFolder = made
                return made
            }
            var unreadable: [String] = []
            for entry in entries.sorted(by: { $0.path < $1.path }) {
                let name = entry.path.relative(to: root)?.string ?? entry.path.string
                if global.json {
                    var object = JSONObject()
                    object.add("path", name)
                    object.add("kind", entry.kind.rawValue)
                    object.add("size", entry.size)
                    object.add("modified", entry.modifiedNanos.map(Self.time))
                    object.add("etag", entry.etag)
                    if let asOf {
                        object.add("cached", true)
                        object.add("as_of", asOf.map { Date(timeIntervalSince1970: $0).ISO8601Format() })
                    }
                    StandardStreams.output(object.text)
                } else {
                    let size = entry.kind == .directory ? "-" : ByteFormat.string(entry.size)
                    StandardStreams.output(size.leftPadded(11) + "  " + (entry.modifiedNanos.map(Self.time) ?? "-") + "  "
                        + name + (entry.kind == .directory ? "/" : ""))
                }
                guard archiveContents, asOf == nil, entry.kind == .file, ArchiveContents.isArchiveName(name) else { continue }
                let folder: String
                do {
                    folder = try scratch()
                } catch {
                    throw CommandFailure.runtime("cannot make a private folder to read archives in: \(error.description)")
                }
                do {
                    let members = try await ArchiveContents.members(of: entry, backend: backend, scratchDirectory: folder)
                    for member in members { printMember(member, of: name) }
                } catch {
                    StandardStreams.error("ferry: \(error.message)")
                    unreadable.append(name)
                }
            }
            if !unreadable.isEmpty {
                throw CommandFailure.runtime("\(unreadable.count) archive(s) could not be read (\(unreadable.joined(separator: ", "))); "
                    + "they may be damaged or in a format this libarchive does not read")
            }
        }

        /// One member below its archive's line: indented in text, `archive` + `member` in JSON.
        /// Links and names that would be refused on extraction are marked.
        private func printMember(_ member: ArchiveEntry, of archive: String) {
            let refusal = ArchiveContents.refusalReason(for: member)
            if global.json {
                var object = JSONObject()
                object.add("path", archive)
                object.add("member", member.name)
                object.add("kind", member.kind.rawValue)
                if let size = member.size { object.add("size", size) }
                object.add("modified", member.modifiedNanos.map(Self.time))
                object.add("link_target", member.linkTarget)
                object.add("refused", refusal)
                StandardStreams.output(object.text)
                return
            }
            let size = member.kind == .file ? member.size.map(ByteFormat.string) ?? "?" : "-"
            var line = size.leftPadded(11) + "  " + (member.modifiedNanos.map(Self.time) ?? "-") + "    " + archive + " » " + member.name
            if member.kind == .directory && !member.name.hasSuffix("/") { line += "/" }
            if let target = member.linkTarget { line += " -> " + target }
            if let refusal { line += "  (\(refusal))" }
            StandardStreams.output(line)
        }

        /// What the journal holds of that place, or nil when no folder syncs with it.
        private static func fromJournal(_ backend: any Backend, _ root: RemotePath, recursive: Bool,
                                        context: CommandContext) async throws -> CachedListing.Answer? {
            do {
                return try await CachedListing.answer(backend: backend, root: root, recursive: recursive,
                                                      state: context.state)
            } catch {
                throw CommandFailure.runtime("cannot read the journal: \(error.description)")
            }
        }

        private static func time(_ nanos: Int64) -> String {
            Date(timeIntervalSince1970: Double(nanos) / 1e9).ISO8601Format()
        }
    }
}
