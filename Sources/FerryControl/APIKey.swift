import FerryPluginAPI
import FerrySystem
import Foundation

/// The control API's key: read from a 0600 file, or made (32 random bytes, hex) and
/// written to one on the first start. A key file others can read is refused.
public enum APIKey {
    public static func defaultPath(stateDirectory: String) -> String {
        LocalFileSystem.join(stateDirectory, "api-key")
    }

    /// The key in `path`; made there (0600) when there is none and `create` is true.
    public static func load(path: String, create: Bool = true) throws -> String {
        if let metadata = try? LocalFileSystem.metadata(path) {
            guard metadata.permissions & 0o077 == 0 else {
                throw ControlServerError("the API key file \(path) can be read by others; chmod 600 \(path)")
            }
            guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw ControlServerError("cannot read the API key file \(path)")
            }
            let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard key.count >= 16 else { throw ControlServerError("the API key in \(path) is shorter than 16 characters") }
            return key
        }
        guard create else { throw ControlServerError("no API key file at \(path)") }
        let key = generate()
        do {
            try createPrivateFile(path, text: key + "\n")
        } catch is KeyFileExists {
            // Made by another start meanwhile: that one is the key.
            return try load(path: path, create: false)
        }
        return key
    }

    /// Writes `text` to a new 0600 file at `path` and flushes it; an existing file is never
    /// touched (EEXIST is thrown as `alreadyExists`).
    static func createPrivateFile(_ path: String, text: String) throws {
        do throws(SystemError) {
            try PrivateFile.create(path, bytes: Array(text.utf8))
        } catch {
            if error.code == EEXIST { throw KeyFileExists() }
            throw ControlServerError(error.description)
        }
    }

    struct KeyFileExists: Error {}

    /// 32 random bytes in hex.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

public struct ControlServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
