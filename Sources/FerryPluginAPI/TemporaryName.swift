/// The names Ferry gives files while they are being written, on either side.
///
/// A temporary file sits beside its target as `.NAME.ferry-part`, so it is on the same
/// filesystem (rename is atomic), easy to recognise, and the same name on every attempt
/// (so an interrupted transfer can be continued). Names too long for that get a hash.
public enum TemporaryName {
    public static let suffix = ".ferry-part"
    static let maxNameBytes = 255

    public static func `for`(_ name: String) -> String {
        let candidate = "." + name + suffix
        if candidate.utf8.count <= maxNameBytes { return candidate }
        return ".ferry-" + fnv1a64Hex(name) + suffix
    }

    /// The temporary name of one writer among several (`UploadRequest.temporaryTag`):
    /// `.NAME.TAG.ferry-part`, so that two devices uploading one name at the same moment
    /// never write one temporary file. Without a tag, the plain name.
    public static func `for`(_ name: String, tag: String?) -> String {
        guard let tag, !tag.isEmpty else { return self.for(name) }
        return self.for(name + "." + tag)
    }

    public static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(suffix)
    }

    /// FNV-1a: a stable, dependency-free 64-bit hash; only uniqueness of long names matters.
    public static func fnv1a64Hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
