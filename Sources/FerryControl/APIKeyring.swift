import FerryPluginAPI
import FerrySystem
import Foundation

/// The control API's keys: the first key (`api-key` in the state folder, or
/// `daemon.api_key_file`), which is admin, and any number more in `api-keys/NAME`, each a
/// 0600 file holding `ROLE KEY`. They are read on each request over TCP, so a key added or
/// revoked with `ferry api-key` counts at once, without a reload. A key file others can
/// read is left out (and said so), as the first key's is refused.
public struct APIKeyring: Sendable {
    public struct Key: Sendable, Equatable {
        public var name: String
        public var role: APIRole
        public var secret: String
        /// When the key was made (its file's modification time), seconds since 1970.
        public var created: Double
    }

    public let stateDirectory: String
    /// The first key's file.
    public let primaryFile: String

    public init(stateDirectory: String, primaryFile: String? = nil) {
        self.stateDirectory = stateDirectory
        self.primaryFile = primaryFile ?? APIKey.defaultPath(stateDirectory: stateDirectory)
    }

    public var folder: String { LocalFileSystem.join(stateDirectory, "api-keys") }

    /// The name the first key goes by in lists and messages.
    public static let primaryName = "default"

    /// Every usable key; `problems` says which files were left out and why.
    public func keys() -> (keys: [Key], problems: [String]) {
        var keys: [Key] = []
        var problems: [String] = []
        if let secret = try? APIKey.load(path: primaryFile, create: false) {
            let created = (try? LocalFileSystem.metadata(primaryFile)).map { Double($0.modifiedNanos) / 1e9 } ?? 0
            keys.append(Key(name: Self.primaryName, role: .admin, secret: secret, created: created))
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names.sorted() where Self.isValidName(name) {
            let path = LocalFileSystem.join(folder, name)
            guard let metadata = try? LocalFileSystem.metadata(path), metadata.kind == .file else { continue }
            guard metadata.permissions & 0o077 == 0 else {
                problems.append("the key file \(path) can be read by others and is not used; chmod 600 \(path)")
                continue
            }
            guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else { continue }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
            guard fields.count == 2, let role = APIRole(rawValue: fields[0]), fields[1].count >= 16 else {
                problems.append("the key file \(path) does not hold ROLE KEY; make it again with ferry api-key add")
                continue
            }
            keys.append(Key(name: name, role: role, secret: fields[1], created: Double(metadata.modifiedNanos) / 1e9))
        }
        return (keys, problems)
    }

    /// Makes a key named `name` with `role` and returns its secret (shown once).
    public func add(name: String, role: APIRole) throws -> String {
        guard Self.isValidName(name), name != Self.primaryName else {
            throw ControlServerError("a key's name is 1 to 64 letters, digits, '.', '_' or '-', not starting with '.', and not '\(Self.primaryName)'")
        }
        try LocalFileSystem.makePrivateDirectories(folder)
        let path = LocalFileSystem.join(folder, name)
        let secret = APIKey.generate()
        do {
            try APIKey.createPrivateFile(path, text: "\(role.rawValue) \(secret)\n")
        } catch is APIKey.KeyFileExists {
            throw ControlServerError("a key named \(name) exists; revoke it first (ferry api-key revoke \(name))")
        }
        return secret
    }

    /// Removes the key `name`; false when there is none.
    public func revoke(name: String) throws -> Bool {
        guard name != Self.primaryName else {
            throw ControlServerError("the default key is revoked by replacing it: remove \(primaryFile) and restart the daemon, which makes a new one")
        }
        guard Self.isValidName(name) else { return false }
        let path = LocalFileSystem.join(folder, name)
        do throws(SystemError) {
            return try PrivateFile.remove(path)
        } catch {
            throw ControlServerError(error.description)
        }
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && !name.hasPrefix(".") && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }
}
