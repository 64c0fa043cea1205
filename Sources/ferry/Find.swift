import ArgumentParser
import FerryCore
import FerryJournal
import FerryPlanning
import FerrySystem
import Foundation

extension Ferry {
    /// Searches the names of every file the journal knows, across folders: instant, and
    /// with the remote offline as well as online (the journal is what Ferry last saw).
    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "find",
            abstract: "Search file names across folders, from the journal: instant, online or offline.",
            discussion: """
                PATTERN with *, ? or [ is a glob on the name (on the path when it holds a /), \
                as in ignore patterns; anything else is found anywhere in the path, ignoring case. \
                Exit 0 when a file matched, 1 when none did.
                """)

        @Argument(help: "What to look for, e.g. IMG_2024, '*.gpx', 'DCIM/**/*.heic'.")
        var pattern: String

        @Argument(help: "Only this folder (a configured name or a path).")
        var folder: String?

        @Option(name: .long, help: ArgumentHelp("At most this many files (default 1000).", valueName: "n"))
        var limit = 1000

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let keep = try Self.matcher(pattern)
            let existing: RecordedFolders?
            do {
                existing = try await RecordedFolders.read(context.state)
            } catch {
                throw CommandFailure.runtime(error.description)
            }
            guard let recorded = existing else { throw ExitCode(1) }
            let journal = recorded.journal
            var pairs = recorded.pairs
            if let folder {
                pairs = recorded.pairs(named: folder, config: context.config, currentDirectory: context.currentDirectory)
                if pairs.isEmpty { throw CommandFailure.usage("no folder named '\(folder)' in the journal") }
            }
            var found = 0
            for pair in pairs {
                guard let id = pair.id, found < limit else { continue }
                let files: [KnownFile]
                do {
                    files = try await journal.knownFiles(pairId: id, limit: limit - found, keep: keep)
                } catch {
                    throw CommandFailure.runtime(error.description)
                }
                found += files.count
                // An ad-hoc pair goes by its folder, as a person typed it.
                let label = context.config.folder(named: pair.name) != nil
                    ? pair.name : PairLabel.local(pair.localRoot, currentDirectory: context.currentDirectory)
                for file in files { show(file, in: pair, label: label) }
            }
            if found >= limit { StandardStreams.error("ferry: the first \(limit) files shown; --limit N for more") }
            if found == 0 { throw ExitCode(1) }
        }

        /// Where a file is, in the words of `ferry status`.
        static func place(_ file: KnownFile) -> String {
            switch (file.localSize != nil, file.remoteSize != nil) {
            case (true, true): "here and on the remote"
            case (true, false): "here only"
            case (false, true): "on the remote only"
            case (false, false): "nowhere now"
            }
        }

        private func show(_ file: KnownFile, in pair: FolderPairRecord, label: String) {
            let size = file.localSize ?? file.remoteSize ?? 0
            let modified = file.localModifiedNanos ?? file.remoteModifiedNanos
            if global.json {
                var object = JSONObject()
                object.add("folder", label)
                object.add("path", file.path)
                object.add("local_path", LocalFileSystem.join(pair.localRoot, file.path))
                object.add("size", size)
                object.add("modified", modified.map { Date(timeIntervalSince1970: Double($0) / 1e9).ISO8601Format() })
                object.add("status", file.status.rawValue)
                object.add("local", file.localSize != nil)
                object.add("remote", file.remoteSize != nil)
                StandardStreams.output(object.text)
            } else {
                StandardStreams.output(ByteFormat.string(size).leftPadded(11) + "  " + label + ": " + file.path
                    + "  (" + Self.place(file) + ")")
            }
        }

        /// A glob for a pattern with glob characters, else a case-blind substring of the path.
        static func matcher(_ pattern: String) throws -> @Sendable (String) -> Bool {
            if pattern.contains(where: { "*?[".contains($0) }) {
                do {
                    let glob = try GlobPattern(pattern)
                    return { glob.matches($0) }
                } catch {
                    throw CommandFailure.usage(error.description)
                }
            }
            let needle = pattern.lowercased()
            return { $0.lowercased().contains(needle) }
        }
    }
}
