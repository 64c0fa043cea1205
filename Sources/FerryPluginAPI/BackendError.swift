/// An error from a backend, with the one question the scheduler asks of it:
/// is this worth retrying?
public struct BackendError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Codable {
        case notFound
        case alreadyExists
        case permissionDenied
        case authenticationFailed
        case noSpace
        case readOnly
        case invalidName
        case unreachable
        case timeout
        case connectionLost
        case serverError
        case throttled
        case changedDuringTransfer
        case unsupported
        case protocolViolation
        case io
        case cancelled
    }

    public var code: Code
    public var message: String
    public var path: String?
    /// The underlying cause (errno text, HTTP status line, library message); never a secret.
    public var cause: String?
    /// A server's explicit "try again after" hint.
    public var retryAfterSeconds: Double?
    /// The error underneath, as its own type (a `SystemError` with its errno, …), for
    /// callers that need more than the text in `cause`.
    public var underlying: (any Error & Sendable)?
    private var retryableOverride: Bool?

    public init(_ code: Code, _ message: String, path: String? = nil, cause: String? = nil,
                retryable: Bool? = nil, retryAfterSeconds: Double? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
        self.retryableOverride = retryable
        self.retryAfterSeconds = retryAfterSeconds
        self.underlying = underlying
    }

    /// Transient conditions are retried with backoff; everything else fails the file at once.
    public var isRetryable: Bool {
        if let retryableOverride { return retryableOverride }
        switch code {
        case .unreachable, .timeout, .connectionLost, .serverError, .throttled, .changedDuringTransfer:
            return true
        case .io:
            return true
        case .notFound, .alreadyExists, .permissionDenied, .authenticationFailed, .noSpace, .readOnly,
             .invalidName, .unsupported, .protocolViolation, .cancelled:
            return false
        }
    }

    /// Whether the failure may mean the backend as a whole is gone (no connection, a
    /// connection dropped, no answer in time) rather than that this one file failed. The
    /// core answers it by probing the backend before it counts the failure against the file.
    public var suggestsOutage: Bool {
        switch code {
        case .unreachable, .connectionLost, .timeout: return true
        default: return false
        }
    }

    public var description: String {
        var text = message
        if let path { text += " (\(path))" }
        if let cause { text += ": \(cause)" }
        return text
    }
}

extension BackendError {
    /// An upload of a name the listing did not show (`UploadRequest.expectsNewFile`) found
    /// the name taken by another writer meanwhile; the core decides the file again.
    /// `path` as the backend names it in messages; `cause` the refused request.
    public static func anotherWriterCreated(_ path: String, cause: String? = nil) -> BackendError {
        BackendError(.alreadyExists, "another writer created this file since the listing; it is decided again",
                     path: path, cause: cause)
    }

    /// A conditional replacing write (`UploadRequest.replacedETag`) found another version
    /// under the name.
    public static func anotherWriterReplaced(_ path: String, cause: String? = nil) -> BackendError {
        BackendError(.alreadyExists, "another writer replaced this file since the listing; it is decided again",
                     path: path, cause: cause)
    }
}
