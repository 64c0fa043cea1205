import ArgumentParser
import FerryCore

extension Ferry {
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Two-way sync: changes on either side go to the other.",
            discussion: """
                FOLDER is a folder's name in config.yml, or a local path with --to REMOTE. \
                With no FOLDER, every configured folder whose mode is sync.

                REMOTE is a configured remote (nas, or nas:some/path), a URL (dav://, davs://, \
                http://, https://, s3://, file://) or a local path.

                A file changed on both sides since the last sync is a conflict, settled by the \
                folder's conflict policy (default keep-both: nothing is lost).

                Deleted and overwritten files go to the trash (.ferry-trash/ locally, on the \
                remote beside the files), and a run that would delete more than \
                transfers.max_delete of a side stops before changing anything.
                """)

        @Argument(help: "A configured folder's name, or a local path (with --to).")
        var folder: String?

        @Option(name: .long, help: ArgumentHelp("The remote of an ad-hoc folder.", valueName: "remote"))
        var to: String?

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions

        /// Not offered (a sync always carries deletions over), but understood, so that a
        /// person who types it learns why it is not needed.
        @Flag(name: .long, help: .hidden)
        var delete = false

        func validate() throws {
            if delete {
                throw ValidationError("sync always carries deletions over (into the trash); --delete is for push and pull")
            }
            try transfer.validateDeleteLimits(mirror: true)
        }

        func run() async throws {
            try await FolderRunCommand.run(mode: .sync, folder: folder, remote: to, global: global, transfer: transfer,
                                           mirror: false)
        }
    }
}
