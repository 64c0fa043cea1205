import ArgumentParser
import FerryCore
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Make failed files (syncError) runnable again, with a fresh count of attempts.",
            discussion: """
                PATH is a file or folder inside a synced folder, or a configured folder's name.
                `ferry status --errors` lists the failed files; the next push, pull or daemon pass sends them.
                """)

        @Argument(help: "Failed files or folders to retry.")
        var paths: [String] = []

        @Flag(name: .long, help: "Retry every failed file of every folder.")
        var all = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if all == !paths.isEmpty { throw ValidationError("give the paths to retry, or --all") }
        }

        func run() async throws {
            let context = try CommandContext.load(global)
            do {
                let service = try await context.folderService(else: "there is nothing to retry")
                let changed = try await all ? service.retryAll() : service.retry(paths.map { path in
                    guard let target = service.recorded.target(path, config: context.config,
                                                               currentDirectory: context.currentDirectory) else {
                        throw CommandFailure.usage("\(path) is not inside any synced folder; see ferry status")
                    }
                    return target
                })
                let reset = changed.flatMap { change in change.paths.map { (change.pair.name, $0) } }
                if global.json {
                    var object = JSONObject()
                    object.add("event", "retry")
                    object.add("files", reset.map { entry in
                        var item = JSONObject()
                        item.add("folder", entry.0)
                        item.add("path", entry.1)
                        return item
                    })
                    StandardStreams.output(object.text)
                } else {
                    for (folder, path) in reset { StandardStreams.output("retry \(folder): \(path)") }
                    StandardStreams.output(reset.isEmpty ? "no failed file matched" : "\(reset.count) file(s) will be sent on the next run")
                }
            } catch let error as JournalError {
                throw CommandFailure.runtime(error.description)
            }
        }
    }
}
