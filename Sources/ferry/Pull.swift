import ArgumentParser
import FerryCore

extension Ferry {
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pull",
            abstract: "Fetch remote changes into the local folder.",
            discussion: """
                FOLDER is a folder's name in config.yml, or a local path with --from REMOTE. \
                With no FOLDER, every configured folder whose mode is pull.

                REMOTE is a configured remote (nas, or nas:some/path), a URL (dav://, davs://, \
                http://, https://, s3://, file://) or a local path.

                With PATH…, files (or folders) of FOLDER that its cache budget (local_limit) \
                evicted are fetched on demand, and count as the most recently used.

                With --version TIME, every file's version that was current at TIME on the \
                remote (a folder that keeps versions: remote_rights without delete) is put \
                back into the local folder; ferry versions PATH lists a file's versions.
                """)

        @Argument(help: "A configured folder's name, or a local path (with --from).")
        var folder: String?

        @Argument(help: ArgumentHelp("Evicted files or folders of FOLDER to fetch on demand.", valueName: "path"))
        var paths: [String] = []

        @Option(name: .long, help: ArgumentHelp("Where to pull an ad-hoc folder from.", valueName: "remote"))
        var from: String?

        // Spelt --version on the command line: `CommandLineEntry` hands it over under this
        // name, since the root command's --version flag would take it first.
        @Option(name: .customLong("as-of"),
                help: ArgumentHelp("Restore every file's version that was current at this time (UTC); also --version TIME.",
                                   valueName: "time"))
        var asOf: String?

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var mirror: MirrorOption

        func validate() throws {
            try transfer.validateDeleteLimits(mirror: mirror.delete)
            if !paths.isEmpty && (folder == nil || from != nil) {
                throw ValidationError("ferry pull FOLDER PATH… fetches files of a configured folder; give its name first")
            }
        }

        func run() async throws {
            if let asOf {
                guard paths.isEmpty, !mirror.delete else {
                    throw CommandFailure.usage("--version restores a whole folder: ferry pull FOLDER --version TIME (no PATH, no --delete)")
                }
                return try await VersionRestoreCommand.run(folder: folder, remote: from, time: asOf, global: global)
            }
            try await FolderRunCommand.run(mode: .pull, folder: folder, remote: from, global: global, transfer: transfer,
                                           mirror: mirror.delete, fetch: paths)
        }
    }
}
