import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// Reads a whole local folder at once (`LocalTreeWalk` to the end): for callers that look
/// at a part of a folder or need every file in hand (verify, the daemon's feed). A run
/// streams the walk instead (`PagedPlanning`).
public struct LocalScanner: Sendable {
    public let root: String
    public let ignore: GlobSet
    public let followSymlinks: Bool

    public init(root: String, ignore: GlobSet, followSymlinks: Bool) {
        self.root = root
        self.ignore = ignore
        self.followSymlinks = followSymlinks
    }

    /// Every regular file in path order, the names that clash by Unicode normalization
    /// included (callers of a whole scan decide about them).
    public func scan() async throws(BackendError) -> ScanResult {
        let root = self.root
        let ignore = self.ignore
        let followSymlinks = self.followSymlinks
        return try await BlockingIO.run { () throws(BackendError) -> ScanResult in
            try Self.walk(root: root, ignore: ignore, followSymlinks: followSymlinks)
        }
    }

    static func walk(root: String, ignore: GlobSet, followSymlinks: Bool) throws(BackendError) -> ScanResult {
        var walk = try LocalTreeWalk(root: root, ignore: ignore, followSymlinks: followSymlinks)
        var result = ScanResult(entries: [], notes: [])
        while !walk.isFinished {
            let batch = try walk.next(limit: 10_000)
            result.entries += batch.entries
            result.notes += batch.notes
            result.entries += batch.clashes.flatMap(\.files)
        }
        return result
    }

    /// Folders with a name starting with `.` (and the folders below them), found by a walk
    /// that reads folders only: a listing of a server that hides such names is told to
    /// look for them before the scan itself is streamed.
    public func hiddenFolders() async -> [String] {
        let root = self.root
        let ignore = self.ignore
        return await BlockingIO.run { () -> [String] in
            var found: [String] = []
            var pending: [RelativePath] = [.root]
            while let folder = pending.popLast() {
                guard let names = try? LocalFileSystem.subfolderNames(LocalFileSystem.join(root, folder.string)) else { continue }
                for name in names {
                    guard let path = try? folder.appending(name), !ignore.matches(path.string) else { continue }
                    if PairRun.isHidden(path.string) { found.append(path.string) }
                    pending.append(path)
                }
            }
            return found
        }
    }
}
