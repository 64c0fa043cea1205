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
                let journal = try await context.recordedJournal(else: "there is nothing to retry")
                let pairs = try await journal.folderPairs()
                var targets: [(FolderPairRecord, [String]?)] = []
                if all {
                    targets = pairs.map { ($0, nil) }
                } else {
                    for path in paths {
                        guard let target = Self.target(path, pairs: pairs, context: context) else {
                            throw CommandFailure.usage("\(path) is not inside any synced folder; see ferry status")
                        }
                        targets.append(target)
                    }
                }
                var reset: [(String, String)] = []
                for (pair, relative) in targets {
                    guard let id = pair.id else { continue }
                    for path in try await journal.retryFailed(pairId: id, paths: relative, at: context.clock.wallTime()) { reset.append((pair.name, path)) }
                }
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

        /// The pair and relative path a command-line path names: a configured folder's name
        /// (the whole folder), or a local path inside a pair's folder.
        static func target(_ text: String, pairs: [FolderPairRecord], context: CommandContext) -> (FolderPairRecord, [String]?)? {
            if let folder = context.config.folder(named: text), let pair = pairs.first(where: { $0.localRoot == folder.localPath }) {
                return (pair, nil)
            }
            let absolute = LocalFileSystem.absolute(text, relativeTo: context.currentDirectory)
            for pair in pairs.sorted(by: { $0.localRoot.count > $1.localRoot.count }) {
                if absolute == pair.localRoot { return (pair, nil) }
                if absolute.hasPrefix(pair.localRoot + "/") {
                    return (pair, [String(absolute.dropFirst(pair.localRoot.count + 1))])
                }
            }
            return nil
        }
    }
}
