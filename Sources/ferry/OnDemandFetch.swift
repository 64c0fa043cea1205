import FerryConfig
import FerryCore
import FerryJournal
import FerrySystem
import Foundation

/// `ferry pull FOLDER PATH…`: marks the evicted files named (or below the folders named)
/// for download by the run that follows, which fetches them and counts them as newest.
enum OnDemandFetch {
    static func request(folder name: String, paths: [String], context: CommandContext, json: Bool, dryRun: Bool) async throws {
        guard let folder = context.config.folder(named: name) else {
            throw CommandFailure.usage("no configured folder named '\(name)'; ferry pull FOLDER PATH… fetches files of a configured folder")
        }
        var relative: [String] = []
        for path in paths {
            guard let inside = relativePath(path, root: folder.localPath, currentDirectory: context.currentDirectory) else {
                throw CommandFailure.usage("\(path) is not inside \(folder.localPath), the folder \(name)")
            }
            relative.append(inside)
        }
        do {
            guard let recorded = try await RecordedFolders.read(context.state), let id = recorded.pair(of: folder)?.id else {
                throw CommandFailure.usage("\(name) has not run yet: nothing is evicted; run ferry pull \(name)")
            }
            let journal = recorded.journal
            if let limit = folder.localLimit {
                try await refuseOverBudget(journal: journal, pairId: id, paths: relative, folder: name, limit: limit)
            }
            if dryRun { return }
            // Marked under the pair's lock: a run under way (the daemon's) writes the rows it
            // planned when it ends, and would undo a mark made meanwhile.
            let lock = try await RunLock.acquireWaiting(stateDirectory: context.stateDirectory, pairId: id,
                                                        clock: context.clock) { _ in
                if !json { StandardStreams.error("ferry: \(name) is running; the fetch is recorded when that run ends") }
            }
            let request = try await journal.requestFetch(pairId: id, paths: relative, at: context.clock.wallTime())
            withExtendedLifetime(lock) {}
            if let unknown = request.unknown.first {
                throw CommandFailure.usage("\(name) has no file at \(unknown.isEmpty ? "its root" : unknown) (as of its last run)")
            }
            if !json {
                let already = request.alreadyLocal > 0 ? "; \(Plural.count(request.alreadyLocal, "file")) already local" : ""
                StandardStreams.output("fetching \(Plural.count(request.requested.count, "evicted file")) on demand\(already)")
            }
        } catch let error as JournalError {
            throw CommandFailure.runtime(error.description)
        }
    }

    /// Files asked for that the folder's cache budget could never hold, even with every
    /// other file evicted, are refused before anything is fetched (the run would fetch them
    /// and then have to evict them, or leave the folder over its budget).
    private static func refuseOverBudget(journal: Journal, pairId: Int64, paths: [String], folder: String,
                                         limit: LocalLimit) async throws {
        var bytes: Int64 = 0
        var files = 0
        for path in paths {
            var after: String?
            while true {
                let page = try await journal.records(pairId: pairId, statuses: [.remoteOnly], prefix: path, after: after, limit: 2_000)
                for record in page where record.isEvicted && (path.isEmpty || record.path == path || record.path.hasPrefix(path + "/")) {
                    bytes += record.remote?.size ?? 0
                    files += 1
                }
                guard page.count == 2_000, let last = page.last else { break }
                after = last.path
            }
        }
        guard limit.isExceeded(bytes: bytes, files: files) else { return }
        let budget = [limit.maxBytes.map { ByteFormat.string($0) }, limit.maxFiles.map { Plural.count($0, "file") }]
            .compactMap { $0 }.joined(separator: ", ")
        throw CommandFailure.usage("\(Plural.count(files, "file")) (\(ByteFormat.string(bytes))) asked for is more than "
            + "\(folder)'s local_limit holds (\(budget)); nothing fetched: ask for fewer files, or raise local_limit in config.yml")
    }

    /// A path relative to the folder's root: an absolute path (or, from inside the folder,
    /// one relative to the current folder) must lie inside it; anything else is taken as
    /// relative to the root already. "" is the whole folder.
    static func relativePath(_ text: String, root: String, currentDirectory: String) -> String? {
        let insideHere = currentDirectory == root || currentDirectory.hasPrefix(root + "/")
        if text.hasPrefix("/") || insideHere {
            let absolute = LocalFileSystem.absolute(text, relativeTo: currentDirectory)
            if absolute == root { return "" }
            guard absolute.hasPrefix(root + "/") else { return nil }
            return String(absolute.dropFirst(root.count + 1))
        }
        let trimmed = text.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
        guard !trimmed.split(separator: "/").contains("..") else { return nil }
        return trimmed
    }
}
