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
    @discardableResult
    public static func generate(at root: String, _ spec: Spec) throws -> [String] {
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
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var random = DeterministicBytes(seed: seed)
        var remaining = size
        while remaining > 0 {
            let chunk = min(remaining, 1 << 20)
            try handle.write(contentsOf: Data(random.bytes(chunk)))
            remaining -= chunk
        }
        try handle.close()
        if let modified { try setModificationTime(path, seconds: modified) }
    }

    public static func setModificationTime(_ path: String, seconds: Double) throws {
        let whole = floor(seconds)
        let spec = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        let times = [spec, spec]
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
