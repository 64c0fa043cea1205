import ArgumentParser
import FerryCore
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Settle a conflict left for a person (conflict policy ask).",
            discussion: """
                PATH is the file in conflict (or a folder: every conflict below it), relative to the \
                current directory or, as `ferry status --conflicts` prints it, to its synced folder.

                --keep local: the local version replaces the remote one. \
                --keep remote: the remote version replaces the local one. \
                --keep both: both stay, the loser as NAME.conflict-DATE-HOST.EXT. \
                A replaced version goes to the trash.

                The folder's next run (`ferry sync`, or `ferry pull` or `ferry push` in its mode) carries the \
                answer out, or at once with --now. On a pull folder --keep local, and on a push folder \
                --keep remote, leave both sides as they are and settle the conflict.
                """)

        enum Keep: String, ExpressibleByArgument, CaseIterable {
            case local, remote, both
        }

        @Argument(help: "The local file in conflict, or a folder.")
        var path: String

        @Option(name: .long, help: "Which version wins.")
        var keep: Keep

        @Flag(name: .long, help: "Sync the folder right away to carry the answer out.")
        var now = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let resolved: [FolderService.PairPaths]
            do {
                let policy: ConflictPolicy = keep == .both ? .keepBoth : keep == .local ? .local : .remote
                resolved = try await context.folderService(else: "there is no conflict to resolve")
                    .resolve(path, currentDirectory: context.currentDirectory, keep: policy)
            } catch let error as JournalError {
                throw CommandFailure.runtime(error.description)
            }
            guard !resolved.isEmpty else {
                let absolute = LocalFileSystem.absolute(path, relativeTo: context.currentDirectory)
                throw CommandFailure.usage("no conflict at \(absolute); `ferry status --conflicts` lists them")
            }
            for change in resolved { report(change.paths, of: change.pair, context: context) }
            guard now else { return }
            for pair in resolved.map(\.pair) {
                guard let mode = configuredMode(pair, context: context) else {
                    throw CommandFailure.usage("--now runs configured folders only; run ferry sync \(pair.localRoot) --to REMOTE")
                }
                try await FolderRunCommand.run(mode: mode, folder: pair.name, remote: nil, global: global,
                                               transfer: try TransferOptions.parse([]), mirror: false, loaded: context)
            }
        }

        private func report(_ paths: [String], of pair: FolderPairRecord, context: CommandContext) {
            if global.json {
                var object = JSONObject()
                object.add("event", "resolved")
                object.add("folder", pair.name)
                object.add("keep", keep.rawValue)
                object.add("paths", paths)
                StandardStreams.output(object.text)
                return
            }
            for path in paths { StandardStreams.output("resolved \(path): keep \(keep.rawValue)") }
            if !now {
                // The folder's own mode: a pull folder's next pull carries it out too.
                let next = configuredMode(pair, context: context).map { "`ferry \($0.rawValue) \(pair.name)`" }
                    ?? "run of \(pair.localRoot) (push, pull or sync)"
                StandardStreams.output("the next \(next) carries it out (or add --now)")
            }
        }

        /// The mode of the configured folder this journal pair is; nil for an ad-hoc pair.
        private func configuredMode(_ pair: FolderPairRecord, context: CommandContext) -> SyncMode? {
            guard let folder = context.config.folder(named: pair.name), folder.localPath == pair.localRoot else { return nil }
            return folder.mode
        }
    }
}
