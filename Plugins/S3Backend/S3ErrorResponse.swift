import CurlTransport
import FerryPluginAPI
import Foundation

/// An S3 error answer (`<Error><Code>…</Code><Message>…</Message></Error>`) turned into a
/// classified `BackendError`: throttling and server failures are retryable (honouring
/// `Retry-After`); refusals are permanent with one line that says what to check.
public struct S3ErrorResponse: Sendable, Equatable {
    public var code: String?
    public var message: String?

    public init(code: String?, message: String? = nil) {
        self.code = code
        self.message = message
    }

    public init(body: Data) {
        var code: String?
        var message: String?
        S3XMLReader.read(body) { field in
            switch field.path {
            case ["Code"]: code = field.text
            case ["Message"]: message = field.text
            default: break
            }
        }
        self.init(code: code, message: message)
    }

    /// The error for an answer with this status and body to `method` on `path`.
    public static func error(status: Int, body: Data, method: String, path: String, retryAfter: String?,
                             addressing: S3Addressing) -> BackendError {
        S3ErrorResponse(body: body).error(status: status, method: method, path: path, retryAfter: retryAfter, addressing: addressing)
    }

    public func error(status: Int, method: String, path: String, retryAfter: String?, addressing: S3Addressing) -> BackendError {
        let cause = "HTTP \(status) on \(method)" + (code.map { " (\($0))" } ?? "")
        let hint = retryAfter.flatMap(HTTPErrorMapping.parseRetryAfter)
        let bucket = "bucket '\(addressing.bucket)' at \(addressing.endpoint)"
        switch code {
        case "SlowDown"?, "RequestLimitExceeded"?, "TooManyRequests"?:
            return BackendError(.throttled, "the store asks to slow down", path: path, cause: cause, retryAfterSeconds: hint)
        case "InternalError"?, "ServiceUnavailable"?, "RequestTimeout"?, "OperationAborted"?:
            return BackendError(.serverError, "the store failed", path: path, cause: cause, retryable: true, retryAfterSeconds: hint)
        case "AccessDenied"?, "AllAccessDisabled"?, "AccountProblem"?:
            return BackendError(.permissionDenied,
                                "the store denied access; check that the key's policy allows \(method) on \(bucket)",
                                path: path, cause: cause)
        case "NoSuchBucket"?:
            // Never `notFound`: that would read as an empty remote folder.
            return BackendError(.invalidName, "the \(bucket) does not exist; check bucket, endpoint and region",
                                path: path, cause: cause)
        case "InvalidAccessKeyId"?:
            return BackendError(.authenticationFailed,
                                "the store does not know the access key; check AWS_ACCESS_KEY_ID (or access_key_env, or the profile)",
                                path: path, cause: cause)
        case "SignatureDoesNotMatch"?:
            return BackendError(.authenticationFailed,
                                "the signature does not match; check the secret key (AWS_SECRET_ACCESS_KEY, secret_key_env or the profile) and region",
                                path: path, cause: cause)
        case "ExpiredToken"?, "InvalidToken"?, "TokenRefreshRequired"?:
            return BackendError(.authenticationFailed, "the session token expired or is invalid; renew AWS_SESSION_TOKEN",
                                path: path, cause: cause)
        case "AuthorizationHeaderMalformed"?, "PermanentRedirect"?, "IllegalLocationConstraintException"?:
            return BackendError(.invalidName, "the \(bucket) is in another region; set region to the bucket's region",
                                path: path, cause: cause)
        case "RequestTimeTooSkewed"?:
            return BackendError(.authenticationFailed, "this machine's clock is too far off the store's; fix the clock (NTP)",
                                path: path, cause: cause)
        case "NoSuchKey"?, "NoSuchUpload"?:
            return BackendError(.notFound, "not found in the store", path: path, cause: cause)
        case "BadDigest"?, "InvalidDigest"?:
            return BackendError(.changedDuringTransfer, "the store received other bytes than were hashed (the file changed while being sent)",
                                path: path, cause: cause, retryable: true)
        case "PreconditionFailed"?:
            return BackendError(.alreadyExists, "the object exists or changed (precondition failed)", path: path, cause: cause)
        case "EntityTooLarge"?:
            return BackendError(.noSpace, "the object is too large for one request", path: path, cause: cause)
        case "QuotaExceeded"?:
            return BackendError(.noSpace, "the store's quota is exhausted", path: path, cause: cause)
        default:
            if status == 503 {
                return BackendError(.throttled, "the store is busy or unavailable", path: path, cause: cause, retryAfterSeconds: hint)
            }
            if status == 403 {
                return BackendError(.permissionDenied,
                                    "the store refused this (403); check the credentials, region and the key's access to \(bucket)",
                                    path: path, cause: cause)
            }
            if status == 301 || status == 307 {
                return BackendError(.invalidName, "the store redirects \(bucket); set region (or endpoint) to where the bucket is",
                                    path: path, cause: cause)
            }
            return HTTPErrorMapping.error(status: status, method: method, path: path, retryAfter: retryAfter)
        }
    }
}
