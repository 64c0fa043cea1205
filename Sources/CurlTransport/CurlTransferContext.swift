import FerryPluginAPI
import FerrySystem
import Foundation

/// Everything libcurl's C callbacks need during one transfer. They reach it through the
/// `void *userdata` as an `Unmanaged` pointer, since C function pointers cannot capture.
/// Used by one blocking thread at a time (the one inside `curl_easy_perform`).
final class CurlTransferContext {
    let observer: any TransferObserver

    private var requestData: Data?
    private var requestDataOffset = 0
    /// `requestData` is only the start of the announced body (`HTTPRequest.Body.cutOff`):
    /// once it is sent, the transfer is aborted instead of ended.
    private var cutsOffAfterData = false
    private var requestFile: OpenFile?
    private var requestContent: (any UploadContent)?
    /// What `requestContent` gives, on its way into libcurl's buffer.
    private var contentBuffer: [UInt8] = []
    /// Where the next bytes of `requestFile` or `requestContent` come from, and how many are left.
    private var requestFileOffset: Int64 = 0
    private var requestFileRemaining: Int64 = 0
    private var requestFileStart: Int64 = 0
    private var requestFileLength: Int64 = 0
    private var requestParts: BodyPartsReader?
    /// `HTTPRequest.lastBodyBytesCheck`.
    private let lastBodyBytesCheck: (@Sendable () throws(BackendError) -> Void)?

    private var memory = Data()
    private var memoryLimit = 0
    private var responseFile: OpenFile?
    private var responseFileOffset: Int64 = 0
    /// A whole download's file is flushed when its response ends; a region is flushed by
    /// the download it belongs to (`ParallelRangedDownload`), range by range.
    private var syncResponseFileAtEnd = false
    /// Body bytes received but not yet written, and where in the file they go. libcurl
    /// hands the body over 16 KiB at a time (CURL_MAX_WRITE_SIZE, whatever the buffer
    /// size): a write per piece was 65,536 `pwrite`s per GiB, a tenth of a fast
    /// download's system time; gathered, it is 8,192. Not more: with 1 MiB writes a 1 GiB
    /// pull over four ranged streams spent 4–5 s in the kernel (ext4 copying each write
    /// into the page cache under the file's lock while the other streams spun on it,
    /// kernel 6.18 on this VM); with 128 KiB, rclone's size too, about 1 s.
    private var pending: [UInt8] = []
    private var pendingStart: Int64 = 0
    private static let writeBatch = 128 << 10
    private var discardBody = false
    /// Body bytes this transfer may take; more aborts it (`HTTPRequest.maxResponseBytes`).
    private var maxBodyBytes: Int64 = .max
    /// Body bytes taken so far, discarded ones included.
    private var bodyBytes: Int64 = 0
    /// Body bytes of non-final responses (redirects, 401 challenges) are not the payload.
    private var payloadStatus = true
    /// The status of the response being received (0 before its status line).
    private var status = 0
    /// `HTTPRequest.range`: the only bytes this transfer may write, checked against the
    /// response's status and `Content-Range` when its first body byte arrives.
    private let requestedRange: ClosedRange<Int64>?
    /// Set once the response's first body byte has been checked against the range.
    private var rangeChecked = false
    /// An error status's body, under `requestedRange`: read and dropped, never written.
    private var dropErrorBody = false

    private(set) var headers: [(String, String)] = []
    private(set) var failure: BackendError?
    private(set) var bytesSent: Int64 = 0
    private(set) var bytesReceived: Int64 = 0

    init(request: HTTPRequest, observer: any TransferObserver) throws(BackendError) {
        self.observer = observer
        requestedRange = request.range
        lastBodyBytesCheck = request.lastBodyBytesCheck
        switch request.body {
        case .none: break
        case let .data(data): requestData = data
        case let .file(path, offset, length):
            requestFile = try BackendError.catching { try OpenFile(path, mode: .read) }
            requestFileOffset = offset
            requestFileRemaining = length
            requestFileStart = offset
            requestFileLength = length
        case let .content(content, offset, length):
            requestContent = content
            requestFileOffset = offset
            requestFileRemaining = length
            requestFileStart = offset
            requestFileLength = length
        case let .parts(parts):
            requestParts = try BodyPartsReader(parts)
        case let .cutOff(data, _):
            requestData = data
            cutsOffAfterData = true
        }
        switch request.responseBody {
        case let .memory(limit):
            memoryLimit = limit
            // A range's body has a known length: held once, not regrown (each doubling
            // copied the window so far, and held both copies for a moment).
            if let range = request.range { memory.reserveCapacity(min(limit, Int(range.count))) }
        case let .file(path, offset):
            // The core created the partial file (never through a link); it is opened, not
            // created, and a link at its name is refused.
            let file = try BackendError.catching { try OpenFile(path, mode: .writeExisting) }
            try BackendError.catching { try file.truncate(to: offset) }
            responseFile = file
            responseFileOffset = offset
            pendingStart = offset
            syncResponseFileAtEnd = request.flushesResponseFile
        case let .fileRegion(path, offset):
            // Other streams write the rest of the file meanwhile: no truncation here.
            responseFile = try BackendError.catching { try OpenFile(path, mode: .writeExisting) }
            responseFileOffset = offset
            pendingStart = offset
        case .discard:
            discardBody = true
            maxBodyBytes = HTTPRequest.discardLimit
        }
        if let bound = request.maxResponseBytes { maxBodyBytes = max(0, bound) }
    }

    var responseBody: Data { memory }

    /// Fills libcurl's upload buffer; returns the bytes written, 0 at the end, or nil to abort.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if observer.isCancelled { return nil }
        var count = 0
        if let data = requestData {
            count = min(buffer.count, data.count - requestDataOffset)
            if count > 0 {
                data.withUnsafeBytes { source in
                    buffer.baseAddress!.copyMemory(from: source.baseAddress! + requestDataOffset, byteCount: count)
                }
                requestDataOffset += count
            } else if cutsOffAfterData {
                // libcurl has sent what the last call gave it before asking again, so the
                // server has the start of the body when the connection goes.
                failure = BackendError(.connectionLost, HTTPRequest.BodyCutOff.message)
                return nil
            }
        } else if let file = requestFile, requestFileRemaining > 0 {
            let want = Int(min(Int64(buffer.count), requestFileRemaining))
            do {
                count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: requestFileOffset)
            } catch {
                failure = BackendError(error)
                return nil
            }
            if count == 0 {
                failure = BackendError(.changedDuringTransfer, "the file became shorter while being sent", path: file.path)
                return nil
            }
            requestFileOffset += Int64(count)
            requestFileRemaining -= Int64(count)
            if requestFileRemaining == 0, !passesLastBodyBytesCheck() { return nil }
        } else if let content = requestContent, requestFileRemaining > 0 {
            let want = Int(min(Int64(buffer.count), requestFileRemaining))
            if contentBuffer.count < want { contentBuffer = [UInt8](repeating: 0, count: want) }
            do throws(BackendError) {
                count = try content.read(into: &contentBuffer, count: want, at: requestFileOffset)
            } catch {
                failure = error
                return nil
            }
            if count == 0 {
                failure = BackendError(.changedDuringTransfer, "the upload's content ended early", retryable: true)
                return nil
            }
            contentBuffer.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: count)
            }
            requestFileOffset += Int64(count)
            requestFileRemaining -= Int64(count)
            if requestFileRemaining == 0, !passesLastBodyBytesCheck() { return nil }
        } else if let parts = requestParts {
            do {
                count = try parts.fill(buffer)
            } catch {
                failure = error
                return nil
            }
        }
        bytesSent += Int64(count)
        pauseIfThrottled(observer.bytesTransferred(count))
        return count
    }

    /// Runs `lastBodyBytesCheck`; false (with `failure` set) when it threw.
    private func passesLastBodyBytesCheck() -> Bool {
        guard let check = lastBodyBytesCheck else { return true }
        do {
            try check()
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Moves the request body back to `position` (libcurl resends it after a redirect or an
    /// authentication challenge); false when that is impossible.
    func rewind(to position: Int64) -> Bool {
        if let data = requestData {
            guard position >= 0, position <= Int64(data.count) else { return false }
            requestDataOffset = Int(position)
            return true
        }
        if requestFile != nil || requestContent != nil {
            guard position >= 0, position <= requestFileLength else { return false }
            requestFileOffset = requestFileStart + position
            requestFileRemaining = requestFileLength - position
            return true
        }
        if let parts = requestParts { return parts.rewind(to: position) }
        return position == 0
    }

    /// Takes a chunk of the response body; false aborts the transfer.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if observer.isCancelled { return false }
        guard payloadStatus else { return true }
        if let range = requestedRange, !rangeChecked {
            rangeChecked = true
            if status == 206 {
                guard let served = responseHeader(named: "content-range").flatMap(Self.contentRangeBounds), served == range else {
                    failure = BackendError(.protocolViolation, "the server sent other bytes than the range asked for", retryable: true)
                    return false
                }
            } else if (200..<300).contains(status) {
                failure = BackendError(.protocolViolation, "the server ignored the requested range", retryable: true)
                return false
            } else {
                dropErrorBody = true
            }
        }
        if dropErrorBody {
            bodyBytes += Int64(bytes.count)
            return bodyBytes <= HTTPRequest.discardLimit
        }
        // Checked before a byte is written: a listed size is a promise, and a server that
        // breaks it (or a file that grew since it was listed) must not fill the disk.
        guard bodyBytes + Int64(bytes.count) <= maxBodyBytes else {
            failure = BackendError(.changedDuringTransfer,
                                   "the server sent more than the \(maxBodyBytes) bytes expected; stopped there "
                                   + "(the file changed since it was listed, or the server misbehaves)", retryable: true)
            return false
        }
        bodyBytes += Int64(bytes.count)
        if discardBody { return true }
        if responseFile != nil {
            if pending.isEmpty { pending.reserveCapacity(Self.writeBatch) }
            pending.append(contentsOf: bytes)
            responseFileOffset += Int64(bytes.count)
            if pending.count >= Self.writeBatch, let error = flushResponseFile() {
                failure = error
                return false
            }
            bytesReceived += Int64(bytes.count)
            pauseIfThrottled(observer.bytesTransferred(bytes.count))
            return true
        }
        guard memory.count + bytes.count <= memoryLimit else {
            failure = BackendError(.protocolViolation, "the server's answer is larger than \(memoryLimit) bytes; refusing it")
            return false
        }
        memory.append(contentsOf: bytes)
        bytesReceived += Int64(bytes.count)
        return true
    }

    /// One header line of the response; a status line starts a new set (redirects, 100, 401).
    ///
    /// Parsed as bytes: libcurl calls this for every header of every request, and going
    /// through `String` trimming (Foundation's `CharacterSet`) cost a tenth of a
    /// small-file push's CPU.
    func header(_ line: UnsafeRawBufferPointer) {
        var start = 0
        var end = line.count
        while start < end, line[start] <= 0x20 { start += 1 }
        while end > start, line[end - 1] <= 0x20 { end -= 1 }
        guard start < end else { return }
        let text = UnsafeRawBufferPointer(rebasing: line[start..<end])
        if text.starts(with: "HTTP/".utf8) {
            headers.removeAll()
            status = Self.statusCode(text)
            rangeChecked = false
            dropErrorBody = false
            // Bodies of redirects and auth challenges are not the payload.
            payloadStatus = !((300..<400).contains(status) || status == 401 || status == 100)
            return
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return }
        var valueStart = colon + 1
        while valueStart < text.count, text[valueStart] <= 0x20 { valueStart += 1 }
        let name = String(decoding: text[..<colon].lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: text[valueStart...]), as: UTF8.self)
        headers.append((name, value))
    }

    /// The three digits after the protocol in `HTTP/1.1 207 Multi-Status`; 0 when absent.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: 0x20) else { return 0 }
        var status = 0
        var index = space + 1
        while index < line.count, index < space + 4, (0x30...0x39).contains(line[index]) {
            status = status * 10 + Int(line[index] - 0x30)
            index += 1
        }
        return index == space + 4 ? status : 0
    }

    /// The first bytes and the last byte of `Content-Range: bytes 10-19/20`.
    static func contentRangeBounds(_ value: String) -> ClosedRange<Int64>? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes "), let slash = trimmed.firstIndex(of: "/") else { return nil }
        let span = trimmed[trimmed.index(trimmed.startIndex, offsetBy: 6)..<slash].split(separator: "-")
        guard span.count == 2, let first = Int64(span[0].trimmingCharacters(in: .whitespaces)),
              let last = Int64(span[1].trimmingCharacters(in: .whitespaces)), first <= last else { return nil }
        return first...last
    }

    private func responseHeader(named name: String) -> String? {
        headers.last { $0.0 == name }?.1
    }

    var isCancelled: Bool { observer.isCancelled }

    /// Writes the gathered body bytes; nil when that worked (or there were none).
    func flushResponseFile() -> BackendError? {
        guard let file = responseFile, !pending.isEmpty else { return nil }
        do {
            try file.write(pending, count: pending.count, at: pendingStart)
        } catch {
            return BackendError(error)
        }
        pendingStart += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
        return nil
    }

    func syncResponseFile() throws(BackendError) {
        guard syncResponseFileAtEnd else { return }
        try BackendError.catching { try responseFile?.sync() }
    }

    private func pauseIfThrottled(_ pause: Duration) {
        if pause > .zero { ChunkedCopy.sleepBlocking(pause) }
    }
}
