import ArgumentParser
import FerryCore
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Drop a folder pair from the journal (its files stay where they are).",
            discussion: """
                FOLDER is a folder's name, or the local path of an ad-hoc pair (as `ferry status` shows it).

                Its next run starts from scratch: files already on both sides are compared, not sent again.
                """)

        @Argument(help: "A folder's name, or the local path of an ad-hoc pair.")
        var folder: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let absolute = LocalFileSystem.absolute(folder, relativeTo: context.currentDirectory)
            do {
                let journal = try await context.recordedJournal(else: "there is nothing to forget")
                // A name means that folder; a path means the ad-hoc pairs there (a configured
                // folder at the same path is forgotten only by its name).
                let all = try await journal.folderPairs()
                var pairs = all.filter { $0.name == folder && context.config.folder(named: folder) != nil }
                if pairs.isEmpty {
                    pairs = all.filter { pair in
                        pair.localRoot == absolute && context.config.folder(named: pair.name)?.localPath != pair.localRoot
                    }
                }
                guard !pairs.isEmpty else {
                    throw CommandFailure.usage("no folder '\(folder)' in the journal; `ferry status` lists them")
                }
                for pair in pairs {
                    guard let id = pair.id else { continue }
                    try await journal.forgetFolderPair(id: id)
                    let label = Status.heading(pair, config: context.config, currentDirectory: context.currentDirectory)
                        .components(separatedBy: " (").first ?? pair.name
                    StandardStreams.output("forgot \(label)")
                }
            } catch let error as JournalError {
                throw CommandFailure.runtime(error.description)
            }
        }
    }
}
