/// A small file beside a partial download that a backend keeps while it writes the
/// partial file out of order (several ranged streams at once). Its presence says: the
/// partial file's size proves nothing; only its first `validBytes` bytes are known good,
/// the rest may have holes.
///
/// The core reads it before it continues a download: it cuts the partial file back to
/// `validBytes` and removes the ledger, so a backend is never handed a partial file whose
/// size overstates its contiguous good bytes (a download killed with SIGKILL while its
/// streams were writing further on). A ledger that cannot be read counts as 0 good bytes.
///
/// The backend creates the ledger before its first out-of-order write, raises
/// `validBytes` only after the bytes below it are flushed, and removes the ledger once
/// the whole file is written and flushed (or after cutting the file back to
/// `validBytes` when it stops early).
public enum PartialFileLedger {
    /// The ledger's name beside the partial file `partial` (a path or a name):
    /// `.NAME.ferry-part` → `.NAME.ferry-ledger.ferry-part`, itself a temporary name, so
    /// listings and scans pass over it like over the partial file.
    public static func path(forPartial partial: String) -> String {
        let stem = partial.hasSuffix(TemporaryName.suffix) ? String(partial.dropLast(TemporaryName.suffix.count)) : partial
        return stem + ".ferry-ledger" + TemporaryName.suffix
    }

    /// The record's text, always `recordLength` bytes, so it is rewritten in place with
    /// one write of a constant size (never shorter than what it replaces).
    public static func encode(validBytes: Int64) -> [UInt8] {
        let digits = String(max(0, validBytes))
        return Array((header + String(repeating: "0", count: 19 - digits.count) + digits + "\n").utf8)
    }

    /// The good bytes a ledger's contents promise; nil when they are not a ledger
    /// (torn, truncated, or something else).
    public static func decode(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == recordLength else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix(header), text.hasSuffix("\n") else { return nil }
        let digits = text.dropFirst(header.count).dropLast()
        guard digits.count == 19, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(digits)
    }

    public static let recordLength = header.utf8.count + 20
    private static let header = "ferry-ledger 1 valid-bytes "
}
