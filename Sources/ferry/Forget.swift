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
            do {
                let forgotten = try await context.folderService(else: "there is nothing to forget")
                    .forget(folder, config: context.config, currentDirectory: context.currentDirectory)
                guard !forgotten.isEmpty else {
                    throw CommandFailure.usage("no folder '\(folder)' in the journal; `ferry status` lists them")
                }
                for pair in forgotten {
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
