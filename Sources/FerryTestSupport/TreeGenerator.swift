import FerryConformance
import Foundation

/// Writes a reproducible folder tree for tests: nested folders, names with spaces and
/// non-ASCII characters, sizes from 0 bytes to tens of MB, distinct modification times.
public enum TreeGenerator {
    public struct Spec: Sendable {
        public var fileCount: Int
        /// Sizes of a few large files added on top of `fileCount` small ones.
        public var largeFileSizes: [Int]
        public var maxSmallSize: Int
        public var seed: UInt64

        public init(fileCount: Int, largeFileSizes: [Int] = [], maxSmallSize: Int = 64 * 1024, seed: UInt64 = 42) {
            self.fileCount = fileCount
            self.largeFileSizes = largeFileSizes
            self.maxSmallSize = maxSmallSize
            self.seed = seed
        }
    }

    static let folderNames = ["DCIM", "100CANON", "Vacances été", "日本 2024", "tracks", "a b", "nested", "x", "Ünïcödé", "raw files"]
    static let stems = ["IMG_", "DSC ", "vidéo-", "trace_", "photo #", "写真", "clip (", "100%_", "file?"]
    static let extensions = ["jpg", "JPG", "mp4", "gpx", "xmp", "zip", "txt", "heic", "CR3", "mov"]

    /// Generates the tree and returns the relative paths written, in the order written.
    /// The files are written on a thread of its own: a tree of megabytes written on the
    /// cooperative pool (two threads here) held back every other test's `await`.
    @discardableResult
    public static func generate(at root: String, _ spec: Spec) async throws -> [String] {
        try await onOwnThread { try writeTree(at: root, spec) }
    }

    private static func writeTree(at root: String, _ spec: Spec) throws -> [String] {
        var random = DeterministicBytes(seed: spec.seed)
        var written: [String] = []
        let baseTime = 1_700_000_000.0
        for index in 0..<(spec.fileCount + spec.largeFileSizes.count) {
            let depth = random.int(below: 4)
            var components: [String] = []
            for _ in 0..<depth { components.append(folderNames[random.int(below: folderNames.count)]) }
            if random.int(below: 10) == 0 { components.insert(".thumbnails", at: max(0, components.count - 1)) }
            let stem = stems[random.int(below: stems.count)]
            let ext = extensions[random.int(below: extensions.count)]
            components.append("\(stem)\(index).\(ext)")
            let relative = components.joined(separator: "/")
            let size: Int
            if index >= spec.fileCount {
                size = spec.largeFileSizes[index - spec.fileCount]
            } else {
                size = random.int(below: 20) == 0 ? 0 : random.int(below: spec.maxSmallSize + 1)
            }
            let mtime = baseTime + Double(random.int(below: 10_000_000)) + Double(random.int(below: 1_000_000_000)) / 1e9
            try write(at: root + "/" + relative, size: size, seed: random.next(), modified: mtime)
            written.append(relative)
        }
        return written
    }

    /// Writes one file of `size` reproducible bytes with the given modification time.
    public static func write(at path: String, size: Int, seed: UInt64, modified: Double? = nil) throws {
        try SampleFile.write(at: path, size: size, seed: seed, modified: modified)
    }

    public static func setModificationTime(_ path: String, seconds: Double) throws {
        try SampleFile.setModificationTime(path, seconds: seconds)
    }
}
