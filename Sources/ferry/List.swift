import ArgumentParser
import FerryCore

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
            let listing = try await RemoteListingQuery(remote: remote, recursive: recursive, cached: cached).answer(context)
            if let asOf = listing.asOf { StandardStreams.error(ListingPrinter.staleNotice(asOf: asOf, cached: cached)) }
            let printer = ListingPrinter(json: global.json, asOf: listing.asOf)
            let archives = ArchiveMemberReader(backend: listing.backend)
            defer { archives.removeScratch() }
            var unreadable: [String] = []
            for entry in listing.entries {
                let name = listing.name(of: entry)
                printer.entry(entry, named: name)
                // A listing from the journal cannot fetch what it lists.
                guard archiveContents, listing.asOf == nil, ArchiveMemberReader.isArchive(entry, named: name) else { continue }
                switch try await archives.members(of: entry) {
                case let .success(members):
                    for member in members { printer.member(member, of: name) }
                case let .failure(error):
                    StandardStreams.error("ferry: \(error.message)")
                    unreadable.append(name)
                }
            }
            if !unreadable.isEmpty {
                throw CommandFailure.runtime("\(unreadable.count) archive(s) could not be read (\(unreadable.joined(separator: ", "))); "
                    + "they may be damaged or in a format this libarchive does not read")
            }
        }
    }
}
