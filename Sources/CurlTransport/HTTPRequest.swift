import FerryPluginAPI
import Foundation

/// One HTTP exchange to perform.
public struct HTTPRequest: Sendable {
    public enum Body: Sendable {
        case none
        case data(Data)
        /// `length` bytes of a local file, starting at `offset`.
        case file(path: String, offset: Int64, length: Int64)
        /// `length` bytes of an upload's content (an encrypted file), starting at `offset`.
        case content(any UploadContent, offset: Int64, length: Int64)
        /// Pieces sent one after another (a multipart form: preamble, file, epilogue), each
        /// read only when libcurl asks for it, so a large file is never held in memory.
        case parts([BodyPart])
        /// `data`, sent as the start of a body announced as `announcedLength` bytes; then the
        /// connection is dropped, as when a client loses its network half-way through an
        /// upload. The transfer fails with `connectionLost` and `BodyCutOff.message`. For the
        /// capability probe, which needs to see what a server keeps after such a cut.
        case cutOff(Data, announcedLength: Int64)
    }

    /// What a `.cutOff` body's transfer fails with.
    public enum BodyCutOff {
        public static let message = "the body was cut off on purpose"
    }

    /// One piece of a `.parts` body.
    public enum BodyPart: Sendable {
        case data(Data)
        /// `length` bytes of a local file, starting at `offset`.
        case file(path: String, offset: Int64, length: Int64)
    }

    public enum ResponseBody: Sendable {
        /// Keep the body in memory, refusing more than `limit` bytes.
        case memory(limit: Int)
        /// Write the body into a local file at `offset` (appending to a partial download).
        case file(path: String, offset: Int64)
        /// Write the body into an existing local file at `offset`, leaving its other bytes
        /// and its size alone: one segment of a download that several streams write at
        /// once (see `ParallelRangedDownload`).
        case fileRegion(path: String, offset: Int64)
        /// Read and drop it.
        case discard
    }

    public var method: String
    /// The full URL, percent-encoded, without credentials.
    public var url: String
    public var headers: [(String, String)]
    public var body: Body
    public var responseBody: ResponseBody
    /// Ask for the body from this byte on (`Range: bytes=N-`); a server that answers 200
    /// instead of 206 makes the request fail with `rangeIgnored`.
    public var resumeFrom: Int64?
    /// The most body bytes this transfer takes (a download: what the listing said is
    /// left); a server that sends more, announced or not, has the transfer aborted with a
    /// retryable `changedDuringTransfer` before the excess is written anywhere. nil: no
    /// bound beyond the response body's own (a memory limit; `discardLimit` for a
    /// discarded body).
    public var maxResponseBytes: Int64?
    /// Ask for exactly these bytes (`Range: bytes=A-B`, unconditional unless the headers
    /// add `If-Range`). Only a 206 whose `Content-Range` starts and ends there has its
    /// body written; a success of any other kind (a 200 with the whole file) aborts the
    /// transfer with a retryable `protocolViolation` before a byte is written, and the
    /// body of an error status is dropped.
    public var range: ClosedRange<Int64>?
    /// Whether a `.file` response body is flushed to disk (`fsync`) when the transfer ends.
    /// False when the caller flushes it with others (a batch of small downloads).
    public var flushesResponseFile = true
    /// Run when the last bytes of a `.file` or `.content` body have been read, before
    /// libcurl has them: a throw keeps them back and drops the connection, so the server
    /// gets a body shorter than announced, and the transfer fails with what was thrown.
    /// A `PUT` straight to a file's final name checks its source here: on a server that
    /// never keeps a cut-off `PUT`, a read of a source that changed meanwhile then never
    /// lands under the name. Run again after a rewind, when the body is read again.
    public var lastBodyBytesCheck: (@Sendable () throws(BackendError) -> Void)?

    /// A body that is read and dropped is still read: an endless one would hold the
    /// transfer forever. No answer Ferry drops (MKCOL, MOVE, DELETE, HEAD) is this large.
    public static let discardLimit: Int64 = 16 << 20

    public init(method: String, url: String, headers: [(String, String)] = [], body: Body = .none,
                responseBody: ResponseBody = .memory(limit: 1 << 20), resumeFrom: Int64? = nil,
                maxResponseBytes: Int64? = nil, range: ClosedRange<Int64>? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.responseBody = responseBody
        self.resumeFrom = resumeFrom
        self.maxResponseBytes = maxResponseBytes
        self.range = range
    }
}

/// What came back.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased, in arrival order (of the final response, after redirects).
    public var headers: [(String, String)]
    /// The body, when it was kept in memory.
    public var body: Data
    public var bytesSent: Int64
    public var bytesReceived: Int64
    /// The URL the final response came from: the request's URL, or where redirects led.
    public var effectiveURL: String

    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.last { $0.0 == lowered }?.1
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}

extension HTTPRequest.Body {
    /// `length` bytes of an upload from `offset`: its content when it has one, else its
    /// source file.
    public static func upload(_ request: UploadRequest, offset: Int64, length: Int64) -> Self {
        if let content = request.content { return .content(content, offset: offset, length: length) }
        return .file(path: request.source, offset: offset, length: length)
    }
}
