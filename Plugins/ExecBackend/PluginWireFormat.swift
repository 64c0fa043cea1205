import FerryPluginAPI
import Foundation

/// The messages of the external plugin protocol (docs/plugin-protocol.md), as they travel:
/// one JSON object per line. Field names are the protocol's, not Swift's, so renaming a
/// Swift property never changes what a plugin sees.
enum PluginWireFormat {
    /// The protocol versions this Ferry speaks; the handshake picks the highest one both
    /// sides know.
    static let versions: ClosedRange<Int> = 1...1

    /// The longest line a plugin may write (a listing of a large folder is one line).
    static let maxLineBytes = 64 << 20

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    /// Chooses the version to speak with a plugin that knows `offered`, or nil when the
    /// ranges do not meet.
    static func negotiate(_ offered: ClosedRange<Int>) -> Int? {
        let low = max(offered.lowerBound, versions.lowerBound)
        let high = min(offered.upperBound, versions.upperBound)
        return low <= high ? high : nil
    }
}

/// One request from Ferry to a plugin. `id` ties replies and progress to it; which other
/// fields are set depends on `op`.
struct PluginRequest: Encodable, Sendable {
    var id: Int
    var op: String
    var path: String?
    var from: String?
    var to: String?
    var overwrite: Bool?
    var source: String?
    var target: String?
    var size: Int64?
    var modifiedNanos: Int64?
    var resume: Bool?
    /// Upload: the listing had nothing at `path`; a plugin refuses a name taken meanwhile
    /// with `already_exists` instead of replacing that file.
    var newFile: Bool?
    var offset: Int64?
    var expected: WireEntry?
    var version: Int?
    var remote: String?
    var options: [String: String]?
    var request: Int?

    init(id: Int, op: String) {
        self.id = id
        self.op = op
    }

    enum CodingKeys: String, CodingKey {
        case id, op, path, from, to, overwrite, source, target, size, resume, offset, expected, remote, options, request
        case modifiedNanos = "modified_ns"
        case newFile = "new_file"
        case version = "protocol"
    }

    func line() -> Data {
        // Encoding a struct of strings, numbers and booleans cannot fail.
        var data = (try? PluginWireFormat.encoder.encode(self)) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }
}

/// A file or folder as the protocol carries it.
struct WireEntry: Codable, Sendable, Equatable {
    var path: String
    var kind: String
    var size: Int64?
    var modifiedNanos: Int64?
    var etag: String?

    enum CodingKeys: String, CodingKey {
        case path, kind, size, etag
        case modifiedNanos = "modified_ns"
    }

    init(_ entry: RemoteEntry) {
        path = entry.path.string
        kind = entry.kind == .directory ? "dir" : "file"
        size = entry.size
        modifiedNanos = entry.modifiedNanos
        etag = entry.etag
    }

    /// The entry as a validated `RemoteEntry`; a hostile or broken name is a protocol error.
    func remoteEntry() throws(BackendError) -> RemoteEntry {
        let remotePath: RelativePath
        do {
            remotePath = try RelativePath(path)
        } catch {
            throw BackendError(.protocolViolation, "the plugin named an invalid path '\(path)'", cause: error.message)
        }
        switch kind {
        case "file":
            guard let size, size >= 0 else {
                throw BackendError(.protocolViolation, "the plugin gave no size for the file '\(path)'")
            }
            return RemoteEntry(path: remotePath, kind: .file, size: size, modifiedNanos: modifiedNanos, etag: etag)
        case "dir":
            return RemoteEntry(path: remotePath, kind: .directory, size: 0, modifiedNanos: modifiedNanos, etag: etag)
        default:
            throw BackendError(.protocolViolation, "the plugin gave the unknown kind '\(kind)' for '\(path)'")
        }
    }
}

/// An error as a plugin reports it: a class (retryable or permanent), a code and a message.
struct WireError: Codable, Sendable {
    var code: String?
    var errorClass: String?
    var message: String?

    enum CodingKeys: String, CodingKey {
        case code, message
        case errorClass = "class"
    }

    /// The protocol's error codes and the backend error each one means.
    static let codes: [String: BackendError.Code] = [
        "not_found": .notFound, "already_exists": .alreadyExists, "permission_denied": .permissionDenied,
        "auth_failed": .authenticationFailed, "no_space": .noSpace, "read_only": .readOnly,
        "invalid_name": .invalidName, "unreachable": .unreachable, "timeout": .timeout,
        "connection_lost": .connectionLost, "server_error": .serverError, "throttled": .throttled,
        "changed": .changedDuringTransfer, "unsupported": .unsupported, "protocol": .protocolViolation,
        "io": .io, "cancelled": .cancelled,
    ]

    func backendError(plugin: String, operation: String, path: String?) -> BackendError {
        let code = code.flatMap { Self.codes[$0] } ?? .io
        let retryable: Bool?
        switch errorClass {
        case "retryable": retryable = true
        case "permanent": retryable = false
        default: retryable = nil
        }
        return BackendError(code, message ?? "\(plugin) failed to \(operation)", path: path,
                            cause: "plugin \(plugin), \(self.code ?? "no code")", retryable: retryable)
    }
}

/// Anything a plugin writes: `hello` (once, first), `reply` (one per request) or
/// `progress` (any number, while a transfer runs). One flat shape keeps decoding to one
/// pass; which fields matter depends on `type`.
struct PluginMessage: Decodable, Sendable {
    struct Versions: Decodable, Sendable {
        var min: Int
        var max: Int
    }

    var type: String
    var id: Int?
    var ok: Bool?
    var error: WireError?
    var entries: [WireEntry]?
    var entry: WireEntry?
    var bytes: Int64?
    var resumedFrom: Int64?
    var versions: Versions?
    var capabilities: [String]?
    var maxConcurrency: Int?
    var name: String?
    var version: String?
    /// Bytes the plugin reported in progress messages for this request (set by Ferry).
    var reportedBytes: Int64 = 0

    enum CodingKeys: String, CodingKey {
        case type, id, ok, error, entries, entry, bytes, capabilities, name, version
        case resumedFrom = "resumed_from"
        case versions = "protocol"
        case maxConcurrency = "max_concurrency"
    }

    /// One decoder for every line: progress messages come many per second.
    private static let decoder = JSONDecoder()

    static func decode(_ line: [UInt8]) -> PluginMessage? {
        try? decoder.decode(PluginMessage.self, from: Data(line))
    }
}

/// What a plugin says about itself in its `hello`.
public struct PluginHello: Sendable {
    public var name: String
    public var version: String
    public var protocolVersions: ClosedRange<Int>
    public var capabilities: BackendCapabilities
    /// Capability names this Ferry does not know (from a newer protocol); shown, not used.
    public var unknownCapabilities: [String]
    public var maxConcurrency: Int

    /// Sets the flag a protocol capability name stands for; false for a name this Ferry
    /// does not know.
    static func enable(_ name: String, in capabilities: inout BackendCapabilities) -> Bool {
        switch name {
        case "ranged-download": capabilities.rangedDownload = true
        case "resumable-upload": capabilities.resumableUpload = true
        case "server-side-move": capabilities.serverSideMove = true
        case "server-side-copy": capabilities.serverSideCopy = true
        case "mtime": capabilities.preservesModificationTime = true
        case "etags": capabilities.listingHasETags = true
        case "atomic-upload": capabilities.atomicUpload = true
        case "new-file-condition": capabilities.conditionalNewNames = true
        case "atomic-move": capabilities.atomicMove = true
        default: return false
        }
        return true
    }

    init(_ message: PluginMessage, fallbackName: String) throws(BackendError) {
        guard message.type == "hello", let versions = message.versions, versions.min <= versions.max else {
            throw BackendError(.protocolViolation,
                               "the plugin's first message must be a hello with protocol {min, max}, got type '\(message.type)'")
        }
        name = message.name ?? fallbackName
        version = message.version ?? "?"
        protocolVersions = versions.min...versions.max
        var capabilities = BackendCapabilities()
        var unknown: [String] = []
        for item in message.capabilities ?? [] {
            if !Self.enable(item, in: &capabilities) { unknown.append(item) }
        }
        self.capabilities = capabilities
        unknownCapabilities = unknown
        maxConcurrency = min(max(message.maxConcurrency ?? 1, 1), 256)
    }
}

/// Everything Ferry checks in one line from a plugin before acting on it, as a single
/// function of bytes: the parser of untrusted input that `make fuzz` exercises.
public enum PluginLineCheck {
    /// Whether Ferry would act on the line: a message whose hello, entries and error all
    /// pass their checks.
    public static func accepts(_ line: [UInt8]) -> Bool {
        guard let message = PluginMessage.decode(line) else { return false }
        if message.type == "hello" { return (try? PluginHello(message, fallbackName: "plugin")) != nil }
        for entry in message.entries ?? [] where (try? entry.remoteEntry()) == nil { return false }
        if let entry = message.entry, (try? entry.remoteEntry()) == nil { return false }
        if let error = message.error { _ = error.backendError(plugin: "plugin", operation: "check", path: nil) }
        return true
    }
}
