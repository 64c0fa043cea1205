import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// `BackendMemory` in the state folder: `STATE/servers/KEY-HASH`, one small file per key,
/// owner-only. Written under a name of its own and renamed into place, so a reader sees
/// the old bytes or the new ones, never half; not flushed, because losing it costs only a
/// question to the server on the next run. Two processes that remember at once each leave
/// a whole file; the later rename wins.
public struct StateFolderBackendMemory: BackendMemory {
    public let folder: String
    /// False for a run told to ask its servers again (`--full`): nothing is read back, and
    /// what the run learns replaces what was kept.
    public let recalls: Bool
    /// Larger files are not read back: what a plugin keeps is a few hundred bytes.
    static let maxBytes = 64 * 1024

    public init(stateDirectory: String, recalls: Bool = true) {
        folder = LocalFileSystem.join(stateDirectory, "servers")
        self.recalls = recalls
    }

    /// The file name for `key`: its SHA-256 in hex, so any key (a URL with a path) makes a
    /// plain name.
    static func fileName(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    public func recall(_ key: String) -> Data? {
        guard recalls else { return nil }
        do {
            let file = try AnchoredFolder(folder).open(Self.fileName(key), .read)
            let bytes = try file.readAll()
            return bytes.count <= Self.maxBytes ? Data(bytes) : nil
        } catch {
            return nil
        }
    }

    public func remember(_ key: String, _ value: Data) {
        let name = Self.fileName(key)
        let scratch = "." + name + "." + String(UInt64.random(in: 0 ... .max), radix: 16)
        do {
            try LocalFileSystem.makeDirectories(folder, permissions: 0o700)
            let anchored = try AnchoredFolder(folder)
            let file = try anchored.open(scratch, .createNew, permissions: 0o600)
            let bytes = [UInt8](value)
            do {
                try file.write(bytes, count: bytes.count, at: 0)
                try anchored.rename(scratch, to: name)
            } catch {
                try? anchored.removeFile(scratch)
            }
        } catch {
            // Best effort (`BackendMemory`): the next run asks the server again.
        }
    }
}
