import Foundation

/// Compares two folder trees byte for byte (and optionally by modification time), for
/// asserting that a sync produced an identical copy.
public enum TreeComparison {
    public struct FileInfo: Sendable, Equatable {
        public var size: Int64
        public var modifiedNanos: Int64
    }

    /// Every regular file below `root`, by relative path. Folders are walked, links not
    /// followed; folders named in `ignoringFolders` (a server's own bookkeeping) are skipped.
    public static func files(in root: String, includeHidden: Bool = true,
                             ignoringFolders: Set<String> = ferryRecords,
                             ignoringNamePrefixes: [String] = []) throws -> [String: FileInfo] {
        var result: [String: FileInfo] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [:] }
        while let relative = enumerator.nextObject() as? String {
            if !ignoringFolders.isEmpty,
               relative.split(separator: "/").dropLast().contains(where: { ignoringFolders.contains(String($0)) }) {
                continue
            }
            if !ignoringNamePrefixes.isEmpty, let name = relative.split(separator: "/").last,
               ignoringNamePrefixes.contains(where: { name.hasPrefix($0) }) {
                continue
            }
            var info = stat()
            guard lstat(root + "/" + relative, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            result[relative] = FileInfo(
                size: Int64(info.st_size),
                modifiedNanos: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        }
        return result
    }

    /// Ferry's own records in a remote folder (the catalog of hidden names), which a copy
    /// of the user's files does not hold.
    public static let ferryRecords: Set<String> = [".ferry-catalog"]

    /// Differences between two trees, one line each; empty when identical. Ferry's own
    /// records (`ferryRecords`) are left out on both sides.
    /// `ignoringNamePrefixes`: files a server leaves of its own (a killed Apache's
    /// `.davfs.tmp…`), which Ferry ignores too.
    public static func differences(_ left: String, _ right: String, compareModificationTimes: Bool = true,
                                   ignoringFolders: Set<String> = [], ignoringNamePrefixes: [String] = []) throws -> [String] {
        let ignored = ignoringFolders.union(ferryRecords)
        let leftFiles = try files(in: left, ignoringFolders: ignored, ignoringNamePrefixes: ignoringNamePrefixes)
        let rightFiles = try files(in: right, ignoringFolders: ignored, ignoringNamePrefixes: ignoringNamePrefixes)
        var problems: [String] = []
        for path in Set(leftFiles.keys).union(rightFiles.keys).sorted() {
            guard let l = leftFiles[path] else { problems.append("only in \(right): \(path)"); continue }
            guard let r = rightFiles[path] else { problems.append("only in \(left): \(path)"); continue }
            if l.size != r.size {
                problems.append("size differs: \(path) (\(l.size) vs \(r.size))")
                continue
            }
            if compareModificationTimes && l.modifiedNanos != r.modifiedNanos {
                problems.append("mtime differs: \(path) (\(l.modifiedNanos) vs \(r.modifiedNanos))")
            }
            if let offset = try firstDifference(left + "/" + path, right + "/" + path) {
                problems.append("content differs: \(path) (from byte \(offset) of \(l.size))")
            }
        }
        return problems
    }

    public static func sameContent(_ left: String, _ right: String) throws -> Bool {
        try firstDifference(left, right) == nil
    }

    /// The offset of the first byte where two files differ (the shorter one's length when
    /// one is the start of the other); nil when they are the same. Where a copy went wrong
    /// says how: a tail cut off, a block of zeros, another file's bytes.
    public static func firstDifference(_ left: String, _ right: String) throws -> Int64? {
        let a = try FileHandle(forReadingFrom: URL(fileURLWithPath: left))
        let b = try FileHandle(forReadingFrom: URL(fileURLWithPath: right))
        defer {
            try? a.close()
            try? b.close()
        }
        var offset: Int64 = 0
        while true {
            let chunkA = try a.read(upToCount: 1 << 20) ?? Data()
            let chunkB = try b.read(upToCount: 1 << 20) ?? Data()
            if chunkA != chunkB {
                let index = zip(chunkA, chunkB).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(chunkA.count, chunkB.count)
                return offset + Int64(index)
            }
            if chunkA.isEmpty { return nil }
            offset += Int64(chunkA.count)
        }
    }
}
