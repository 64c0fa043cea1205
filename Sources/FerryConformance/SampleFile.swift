import Foundation

/// Files of reproducible bytes with a chosen modification time: what conformance checks
/// upload, and what test trees are made of.
public enum SampleFile {
    /// Writes one file of `size` bytes from `seed`, creating its folder; with `modified`,
    /// gives it that modification time (seconds since 1970).
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
