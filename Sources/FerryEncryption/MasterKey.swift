import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// A remote's 32-byte master key: read from a key file (`ferry keygen`), or stretched from
/// a passphrase with scrypt.
public enum MasterKey {
    public static let byteCount = 32
    /// The first line of a key file, then the key as 64 hex digits.
    public static let fileHeading = "# ferry encryption key v1: keep this file; without it the remote cannot be read"

    /// Writes a new random key to `path` with mode 0600; never overwrites a file.
    public static func generate(at path: String) throws(SystemError) {
        if try LocalFileSystem.metadata(path) != nil {
            throw .alreadyExists("refusing to overwrite a file", path: path)
        }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let text = fileHeading + "\n" + Hex.encode(key) + "\n"
        let file = try OpenFile(path, mode: .writeTruncate, permissions: 0o600)
        let bytes = Array(text.utf8)
        try file.write(bytes, count: bytes.count, at: 0)
        try file.sync()
    }

    /// Reads a key file: it must be a regular file nobody but its owner can read or write.
    public static func read(keyFile path: String) throws(BackendError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            let file = try OpenFile(path, mode: .read, followingLinks: true)
            let meta = try file.metadata()
            guard meta.kind == .file else {
                throw BackendError(.authenticationFailed, "the key file \(path) is not a regular file")
            }
            guard meta.permissions & 0o077 == 0 else {
                throw BackendError(.authenticationFailed, "the key file \(path) can be read by others (mode "
                    + String(meta.permissions & 0o777, radix: 8) + "); run chmod 600 on it")
            }
            guard meta.size < 4096 else { throw BackendError(.authenticationFailed, "the key file \(path) is too large to be a key") }
            bytes = try file.readAll()
        } catch let error as BackendError {
            throw error
        } catch {
            throw BackendError(.authenticationFailed, "cannot read the key file \(path): \(error)")
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard lines.count == 1, let key = Hex.decode(lines[0]), key.count == byteCount else {
            throw BackendError(.authenticationFailed, "the key file \(path) does not hold a key (64 hex digits); write one with ferry keygen")
        }
        return key
    }
}
