import FerryPluginAPI
import Foundation

/// Turns an HTTP status into a classified `BackendError`: transient conditions are
/// retryable (408, 423, 425, 429, 5xx; `Retry-After` honoured), the rest are permanent and
/// say what to do.
public enum HTTPErrorMapping {
    public static func error(status: Int, method: String, path: String, retryAfter: String? = nil) -> BackendError {
        let line = "HTTP \(status) on \(method)"
        let hint = retryAfter.flatMap(parseRetryAfter)
        switch status {
        case 401:
            return BackendError(.authenticationFailed, "the server refused the credentials; check this remote's user and password or bearer token", path: path, cause: line)
        case 403:
            return BackendError(.permissionDenied, "the server forbids this; check the credentials and the remote's permissions", path: path, cause: line)
        case 404, 410:
            return BackendError(.notFound, "not found on the server", path: path, cause: line)
        case 405, 501:
            return BackendError(.unsupported, "the server does not support \(method) here", path: path, cause: line)
        case 409:
            return BackendError(.notFound, "the server says the parent folder is missing or in the way", path: path, cause: line)
        case 412:
            return BackendError(.alreadyExists, "the target exists or changed (precondition failed)", path: path, cause: line)
        case 413:
            return BackendError(.noSpace, "the server refuses a body this large", path: path, cause: line)
        case 414:
            return BackendError(.invalidName, "the path is too long for the server", path: path, cause: line)
        case 507:
            return BackendError(.noSpace, "the server is out of space", path: path, cause: line)
        case 408, 425:
            return BackendError(.timeout, "the server timed out the request", path: path, cause: line, retryAfterSeconds: hint)
        case 423:
            return BackendError(.throttled, "the file is locked on the server", path: path, cause: line, retryAfterSeconds: hint)
        case 429:
            return BackendError(.throttled, "the server asks to slow down", path: path, cause: line, retryAfterSeconds: hint)
        case 500..<600:
            return BackendError(.serverError, "the server failed", path: path, cause: line, retryAfterSeconds: hint)
        default:
            return BackendError(.protocolViolation, "unexpected answer from the server", path: path, cause: line)
        }
    }

    /// `Retry-After` in seconds (delta-seconds form); HTTP dates are not trusted across
    /// clocks and give nil.
    public static func parseRetryAfter(_ value: String) -> Double? {
        guard let seconds = Double(value.trimmingCharacters(in: .whitespacesAndNewlines)), seconds >= 0 else { return nil }
        return min(seconds, 3600)
    }
}
