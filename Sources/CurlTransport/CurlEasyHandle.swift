internal import CCurl
import FerryPluginAPI
import Foundation

/// One libcurl easy handle. Reused across requests (after `curl_easy_reset`, which keeps
/// the connection cache, so keep-alive connections are reused). Not Sendable: used by one
/// blocking thread at a time, handed between threads only through `CurlHandlePool`.
final class CurlEasyHandle {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    private static let globalInit: Bool = CCurl_global_init_all() == CURLE_OK

    init() throws(BackendError) {
        guard Self.globalInit, let handle = curl_easy_init() else {
            throw BackendError(.io, "libcurl could not be initialised")
        }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    func perform(_ request: HTTPRequest, settings: CurlTransportSettings, observer: any TransferObserver) -> Result<HTTPResponse, BackendError> {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        let context: CurlTransferContext
        do {
            context = try CurlTransferContext(request: request, observer: observer)
        } catch {
            return .failure(error)
        }
        let retained = Unmanaged.passRetained(context)
        defer { retained.release() }

        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for (name, value) in request.headers {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        var options = Options(handle: handle)
        setConnection(request, settings: settings, &options)
        setCredentials(settings.credentials, &options)
        setMethodAndBody(request, settings: settings, &options, headers: &headerList)
        setCallbacks(userdata: retained.toOpaque(), headers: headerList, &options)
        if let bad = options.refusal {
            return .failure(BackendError(.io, "libcurl refused an option", cause: String(cString: curl_easy_strerror(bad))))
        }
        return outcome(of: curl_easy_perform(handle), context: context, request: request)
    }

    /// The options of one transfer as they are set, and the first libcurl refused.
    private struct Options {
        let handle: UnsafeMutableRawPointer
        private(set) var refusal: CURLcode?

        init(handle: UnsafeMutableRawPointer) {
            self.handle = handle
        }

        mutating func set(_ option: CURLoption, _ value: Int) { record(CCurl_easy_setopt_long(handle, option, value)) }
        mutating func set(_ option: CURLoption, _ value: String) { record(CCurl_easy_setopt_string(handle, option, value)) }

        mutating func record(_ code: CURLcode) {
            if code != CURLE_OK, refusal == nil { refusal = code }
        }
    }

    /// Where to connect and how: the URL, timeouts, redirects, buffers, TLS.
    private func setConnection(_ request: HTTPRequest, settings: CurlTransportSettings, _ options: inout Options) {
        options.set(CURLOPT_URL, request.url)
        options.set(CURLOPT_NOSIGNAL, 1)
        options.set(CURLOPT_NOPROGRESS, 0)
        options.set(CURLOPT_CONNECTTIMEOUT, settings.connectTimeout)
        options.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        options.set(CURLOPT_LOW_SPEED_TIME, settings.stallTimeout)
        options.set(CURLOPT_FOLLOWLOCATION, 1)
        options.set(CURLOPT_MAXREDIRS, settings.maxRedirects)
        options.set(CURLOPT_USERAGENT, settings.userAgent)
        // Buffer sizes are a hint: libcurl 7.88 refuses CURLOPT_BUFFERSIZE with
        // CURLE_BAD_FUNCTION_ARGUMENT while it still holds the previous transfer's buffer,
        // which a transfer that failed before connecting (a host name that does not
        // resolve) leaves behind, and `curl_easy_reset` keeps. Refused, the handle goes on
        // with the buffer it has; counted as a failure, it hid the real error ("could not
        // resolve host") behind "a libcurl function was given a bad argument".
        _ = CCurl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 512 * 1024)
        _ = CCurl_easy_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, 512 * 1024)
        options.set(CURLOPT_TCP_KEEPALIVE, 1)
        if let caFile = settings.caFile { options.set(CURLOPT_CAINFO, caFile) }
        if settings.insecure {
            options.set(CURLOPT_SSL_VERIFYPEER, 0)
            options.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
    }

    private func setCredentials(_ credentials: HTTPCredentials, _ options: inout Options) {
        switch credentials {
        case .none: break
        case let .basic(user, password):
            options.set(CURLOPT_HTTPAUTH, CCurl_auth_basic())
            options.set(CURLOPT_USERNAME, user)
            options.set(CURLOPT_PASSWORD, password)
        case let .digest(user, password):
            options.set(CURLOPT_HTTPAUTH, CCurl_auth_digest())
            options.set(CURLOPT_USERNAME, user)
            options.set(CURLOPT_PASSWORD, password)
        case let .bearer(token):
            options.set(CURLOPT_HTTPAUTH, CCurl_auth_bearer())
            options.set(CURLOPT_XOAUTH2_BEARER, token)
        case .netrc:
            options.set(CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
            options.set(CURLOPT_HTTPAUTH, CCurl_auth_any_safe() | CCurl_auth_basic())
        case let .awsSigV4(provider, accessKey, secretKey):
            options.set(CURLOPT_AWS_SIGV4, provider)
            options.set(CURLOPT_USERNAME, accessKey)
            options.set(CURLOPT_PASSWORD, secretKey)
        }
    }

    /// The method, the body's size, and the range or offset asked for.
    private func setMethodAndBody(_ request: HTTPRequest, settings: CurlTransportSettings, _ options: inout Options,
                                  headers headerList: inout UnsafeMutablePointer<curl_slist>?) {
        // libcurl 7.88 signs every header given to it, "Expect:" (which removes the header)
        // included, and never sends it: the server computes another signature (403). So
        // with SigV4 no `Expect:` removal header is given. libcurl adds its `Expect:
        // 100-continue` to every PUT with a body, but to a POST only above 1 MiB
        // (EXPECT_100_THRESHOLD): a small signed body goes through libcurl's POST path,
        // with the request's own method, and is sent at once instead of after a
        // `100 Continue` (a round trip per small file).
        let signsWithSigV4: Bool
        if case .awsSigV4 = settings.credentials { signsWithSigV4 = true } else { signsWithSigV4 = false }
        let mayRemoveExpect = !signsWithSigV4
        switch (request.method, request.body) {
        case ("GET", .none):
            options.set(CURLOPT_HTTPGET, 1)
        case ("HEAD", .none):
            options.set(CURLOPT_NOBODY, 1)
        case (let method, let body) where signsWithSigV4 && body.isPresent && body.length <= Self.largestBodyWithoutExpect:
            options.set(CURLOPT_POST, 1)
            options.record(CCurl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.length)))
            options.set(CURLOPT_CUSTOMREQUEST, method)
            // Else libcurl's POST path adds (unsigned) `application/x-www-form-urlencoded`.
            if !request.headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                headerList = curl_slist_append(headerList, "Content-Type: application/octet-stream")
            }
        case ("PUT", let body):
            options.set(CURLOPT_UPLOAD, 1)
            options.set(CURLOPT_INFILESIZE_LARGE, Int(body.length))
            if body.length < 1 << 20, mayRemoveExpect { headerList = curl_slist_append(headerList, "Expect:") }
        case (let method, .none):
            options.set(CURLOPT_CUSTOMREQUEST, method)
        case (let method, let body):
            options.set(CURLOPT_CUSTOMREQUEST, method)
            options.set(CURLOPT_UPLOAD, 1)
            options.set(CURLOPT_INFILESIZE_LARGE, Int(body.length))
            if mayRemoveExpect { headerList = curl_slist_append(headerList, "Expect:") }
        }
        if let range = request.range {
            options.set(CURLOPT_RANGE, "\(range.lowerBound)-\(range.upperBound)")
        }
        if let offset = request.resumeFrom, offset > 0 {
            options.record(CCurl_easy_setopt_off_t(handle, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset)))
        }
    }

    /// The headers, the error buffer, and the callbacks that move the bytes (`userdata` is
    /// the transfer's context).
    private func setCallbacks(userdata: UnsafeMutableRawPointer, headers: UnsafeMutablePointer<curl_slist>?,
                              _ options: inout Options) {
        options.record(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        options.record(CCurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata))
        options.record(CCurl_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadCallback))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_READDATA, userdata))
        options.record(CCurl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata))
        options.record(CCurl_easy_setopt_seek_callback(handle, curlSeekCallback))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, userdata))
        options.record(CCurl_easy_setopt_xferinfo_callback(handle, curlProgressCallback))
        options.record(CCurl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, userdata))
    }

    /// The response, or what went wrong, once libcurl has returned.
    private func outcome(of code: CURLcode, context: CurlTransferContext, request: HTTPRequest) -> Result<HTTPResponse, BackendError> {
        var status = 0
        var effectiveURL: UnsafeMutablePointer<CChar>?
        _ = CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = CCurl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effectiveURL)

        // Bytes still gathered in memory go to the file whatever the outcome: an
        // interrupted download continues from what its file holds.
        let flushFailure = context.flushResponseFile()
        if let failure = context.failure { return .failure(failure) }
        guard code == CURLE_OK else {
            return .failure(classify(code, context: context, request: request))
        }
        if let flushFailure { return .failure(flushFailure) }
        do {
            try context.syncResponseFile()
        } catch {
            return .failure(error)
        }
        return .success(HTTPResponse(status: status, headers: context.headers, body: context.responseBody,
                                     bytesSent: context.bytesSent, bytesReceived: context.bytesReceived,
                                     effectiveURL: effectiveURL.map { String(cString: $0) } ?? request.url))
    }

    /// libcurl's EXPECT_100_THRESHOLD: a POST body up to this size is sent without
    /// `Expect: 100-continue`.
    static let largestBodyWithoutExpect: Int64 = 1 << 20

    private func classify(_ code: CURLcode, context: CurlTransferContext, request: HTTPRequest) -> BackendError {
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        let path = Self.redacted(request.url)
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            let host = URL(string: request.url)?.host.map { "'\($0)'" } ?? "of the server"
            return BackendError(.unreachable, "the host name \(host) could not be resolved; check its spelling in the URL, "
                                + "or the network's DNS", path: path, cause: detail)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY:
            return BackendError(.unreachable, "cannot reach the server; check that it is up and the URL is right", path: path, cause: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return BackendError(.timeout, "the transfer stalled or the server did not answer in time", path: path, cause: detail)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return BackendError(.connectionLost, "the connection was lost", path: path, cause: detail)
        case CURLE_ABORTED_BY_CALLBACK:
            return BackendError(.cancelled, "transfer cancelled", path: path)
        case CURLE_RANGE_ERROR:
            return BackendError(.protocolViolation, "the server ignored the requested range", path: path, cause: detail, retryable: true)
        case CURLE_SSL_CONNECT_ERROR where Self.isPlainHTTPAnswer(detail):
            return BackendError(.protocolViolation, "the server does not speak TLS on this port; use http:// (dav://) or its HTTPS port",
                                path: path, cause: detail)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return BackendError(.protocolViolation, "TLS verification failed; set ca_file for a private CA (or, knowingly, insecure: true)", path: path, cause: detail)
        case CURLE_TOO_MANY_REDIRECTS:
            return BackendError(.protocolViolation, "too many redirects", path: path, cause: detail)
        case CURLE_LOGIN_DENIED:
            return BackendError(.authenticationFailed, "the server refused the credentials; check this remote's user and password or bearer token", path: path, cause: detail)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return BackendError(.invalidName, "invalid URL", path: path, cause: detail)
        default:
            return BackendError(.io, "transfer failed", path: path, cause: detail, retryable: true)
        }
    }

    /// OpenSSL's words when a TLS handshake is answered in plain HTTP.
    static func isPlainHTTPAnswer(_ detail: String) -> Bool {
        ["wrong version number", "packet length too long", "http request", "record layer failure"]
            .contains { detail.lowercased().contains($0) }
    }

    /// A URL without any user:password part, for messages.
    static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://"),
              let at = url[schemeEnd.upperBound...].firstIndex(of: "@"),
              !url[schemeEnd.upperBound..<at].contains("/") else { return url }
        return String(url[..<schemeEnd.upperBound]) + String(url[url.index(after: at)...])
    }
}

extension HTTPRequest.Body {
    /// A body to send, even an empty one (`.none` is no body at all).
    var isPresent: Bool {
        if case .none = self { return false }
        return true
    }

    var length: Int64 {
        switch self {
        case .none: return 0
        case let .data(data): return Int64(data.count)
        case let .file(_, _, length): return length
        case let .content(_, _, length): return length
        case let .parts(parts): return parts.reduce(0) { $0 + $1.length }
        case let .cutOff(_, announcedLength): return announcedLength
        }
    }
}

extension HTTPRequest.BodyPart {
    var length: Int64 {
        switch self {
        case let .data(data): return Int64(data.count)
        case let .file(_, _, length): return length
        }
    }
}

private func context(_ userdata: UnsafeMutableRawPointer?) -> CurlTransferContext? {
    userdata.map { Unmanaged<CurlTransferContext>.fromOpaque($0).takeUnretainedValue() }
}

private let curlWriteCallback: CCurl_data_callback = { buffer, size, count, userdata in
    guard let context = context(userdata) else { return 0 }
    let length = size * count
    guard length > 0, let buffer else { return 0 }
    return context.receive(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

private let curlReadCallback: CCurl_data_callback = { buffer, size, count, userdata in
    guard let context = context(userdata), let buffer else { return CCurl_readfunc_abort() }
    guard let filled = context.fill(UnsafeMutableRawBufferPointer(start: buffer, count: size * count)) else {
        return CCurl_readfunc_abort()
    }
    return filled
}

private let curlHeaderCallback: CCurl_data_callback = { buffer, size, count, userdata in
    guard let context = context(userdata), let buffer else { return 0 }
    let length = size * count
    context.header(UnsafeRawBufferPointer(start: buffer, count: length))
    return length
}

private let curlSeekCallback: CCurl_seek_callback = { userdata, offset, origin in
    // CURL_SEEKFUNC_OK = 0, CURL_SEEKFUNC_CANTSEEK = 2; libcurl only seeks from the start.
    guard let context = context(userdata), origin == SEEK_SET else { return 2 }
    return context.rewind(to: Int64(offset)) ? 0 : 2
}

private let curlProgressCallback: CCurl_xferinfo_callback = { userdata, _, _, _, _ in
    guard let context = context(userdata) else { return 1 }
    return context.isCancelled ? 1 : 0
}
