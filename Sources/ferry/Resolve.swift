import ArgumentParser
import FerryCore
import FerryPluginAPI
import Foundation

extension Ferry {
    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle a conflict left for a person (conflict policy ask).",
            discussion: """
                PATH is the local file in conflict (or a folder: every conflict below it).
                --keep local sends the local version over the remote one, --keep remote fetches
                the remote version over the local one (the loser goes to the trash either way),
                --keep both keeps both, the loser as NAME.conflict-DATE-HOST.EXT.
                The next `ferry sync` of the folder carries the answer out.
                `ferry status --conflicts` lists the conflicts.
                """)

        enum Keep: String, ExpressibleByArgument, CaseIterable {
            case local, remote, both
        }

        @Argument(help: "The local file in conflict, or a folder.")
        var path: String

        @Option(name: .long, help: "Which version to keep: local, remote or both.")
        var keep: Keep

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let journalPath = StateLocation.journalPath(in: context.stateDirectory)
            let absolute = LocalFileSystem.absolute(path, relativeTo: context.currentDirectory)
            do {
                guard let journal = try Journal.open(existingAt: journalPath) else {
                    throw CommandFailure.usage("nothing synced yet (no journal at \(journalPath)); there is no conflict to resolve")
                }
                let pairs = try await journal.folderPairs().filter { pair in
                    absolute == pair.localRoot || absolute.hasPrefix(pair.localRoot == "/" ? "/" : pair.localRoot + "/")
                }
                let policy: ConflictPolicy = keep == .both ? .keepBoth : keep == .local ? .local : .remote
                var resolved: [(FolderPairRecord, [String])] = []
                for pair in pairs {
                    guard let id = pair.id else { continue }
                    let relative = absolute == pair.localRoot ? "" : String(absolute.dropFirst(pair.localRoot.count + 1))
                    let paths = try await journal.resolveConflicts(pairId: id, path: relative, keep: policy,
                                                                   at: Date().timeIntervalSince1970)
                    if !paths.isEmpty { resolved.append((pair, paths)) }
                }
                guard !resolved.isEmpty else {
                    throw CommandFailure.usage("no conflict at \(absolute); `ferry status --conflicts` lists them")
                }
                for (pair, paths) in resolved {
                    if global.json {
                        var object = JSONObject()
                        object.add("event", "resolved")
                        object.add("folder", pair.name)
                        object.add("keep", keep.rawValue)
                        object.add("paths", paths)
                        StandardStreams.output(object.text)
                    } else {
                        for path in paths { StandardStreams.output("resolved \(path): keep \(keep.rawValue)") }
                        StandardStreams.output("the next `ferry sync \(pair.name == "ad-hoc" ? pair.localRoot : pair.name)` carries it out")
                    }
                }
            } catch let error as JournalError {
                throw CommandFailure.runtime(error.description)
            }
        }
    }
}
