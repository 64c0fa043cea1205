import ArgumentParser
import FerryCore

extension Ferry {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "push",
            abstract: "Send local changes to the remote.",
            discussion: """
                FOLDER is a folder's name in config.yml, or a local path with --to REMOTE. \
                With no FOLDER, every configured folder whose mode is push.

                REMOTE is a configured remote (nas, or nas:some/path), a URL (dav://, davs://, \
                http://, https://, s3://, file://) or a local path.
                """)

        @Argument(help: "A configured folder's name, or a local path (with --to).")
        var folder: String?

        @Option(name: .long, help: ArgumentHelp("Where to push an ad-hoc folder.", valueName: "remote"))
        var to: String?

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var mirror: MirrorOption

        func validate() throws {
            try transfer.validateDeleteLimits(mirror: mirror.delete)
        }

        func run() async throws {
            try await FolderRunCommand.run(mode: .push, folder: folder, remote: to, global: global, transfer: transfer,
                                           mirror: mirror.delete)
        }
    }
}
