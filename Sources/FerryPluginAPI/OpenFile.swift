#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the value is dropped. Not Sendable: it belongs to
/// the one blocking-I/O closure that opened it.
public final class OpenFile {
    public let path: String
    private let descriptor: Int32

    public enum Mode {
        case read
        /// Create if missing, keep existing bytes (for resuming).
        case writeKeep
        /// Create if missing, drop existing bytes.
        case writeTruncate
    }

    public init(_ path: String, mode: Mode, permissions: UInt32 = 0o644) throws(BackendError) {
        self.path = path
        let flags: Int32
        switch mode {
        case .read: flags = O_RDONLY | O_CLOEXEC
        case .writeKeep: flags = O_WRONLY | O_CREAT | O_CLOEXEC
        case .writeTruncate: flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
        }
        let fd = open(path, flags, mode_t(permissions))
        if fd < 0 {
            throw LocalFileSystem.error(errno, mode == .read ? "cannot open for reading" : "cannot open for writing", path)
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    public func metadata() throws(BackendError) -> FileMetadata {
        var info = stat()
        if fstat(descriptor, &info) != 0 { throw LocalFileSystem.error(errno, "cannot read file information", path) }
        return LocalFileSystem.metadata(from: info)
    }

    public func truncate(to size: Int64) throws(BackendError) {
        if ftruncate(descriptor, off_t(size)) != 0 { throw LocalFileSystem.error(errno, "cannot truncate", path) }
    }

    public func sync() throws(BackendError) {
        if fsync(descriptor) != 0 { throw LocalFileSystem.error(errno, "cannot flush to disk", path) }
    }

    public func setModificationTime(nanos: Int64) throws(BackendError) {
        let spec = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        let times = [spec, spec]
        if futimens(descriptor, times) != 0 { throw LocalFileSystem.error(errno, "cannot set modification time", path) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the count read (0 at the end).
    public func read(into buffer: inout [UInt8], at offset: Int64) throws(BackendError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress, raw.count, off_t(offset))
            }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw LocalFileSystem.error(errno, "cannot read", path)
        }
    }

    /// Writes the first `count` bytes of `buffer` at `offset`, all of them.
    public func write(_ buffer: [UInt8], count: Int, at offset: Int64) throws(BackendError) {
        var done = 0
        while done < count {
            let written = buffer.withUnsafeBytes { raw in
                pwrite(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw LocalFileSystem.error(errno, "cannot write", path)
            }
            done += written
        }
    }

    /// Writes raw bytes at `offset`, all of them (for transports that hand over C buffers).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BackendError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw LocalFileSystem.error(errno, "cannot write", path)
            }
            done += written
        }
    }

    /// Reads up to `bytes.count` bytes at `offset` into raw memory; returns the count read.
    public func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int64) throws(BackendError) -> Int {
        while true {
            let count = pread(descriptor, bytes.baseAddress, bytes.count, off_t(offset))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw LocalFileSystem.error(errno, "cannot read", path)
        }
    }

    /// Reads the whole file (for small files and tests).
    public func readAll() throws(BackendError) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset: Int64 = 0
        while true {
            let count = try read(into: &buffer, at: offset)
            if count == 0 { return result }
            result.append(contentsOf: buffer.prefix(count))
            offset += Int64(count)
        }
    }
}

/// Copies bytes between two open files in chunks, reporting to an observer between chunks.
public enum ChunkedCopy {
    public static let chunkSize = 1 << 20

    /// Copies `count` bytes from `source` at `sourceOffset` to `destination` at
    /// `destinationOffset`. Throws `changedDuringTransfer` when the source ends early.
    public static func copy(
        from source: OpenFile, at sourceOffset: Int64,
        to destination: OpenFile, at destinationOffset: Int64,
        count: Int64, observer: any TransferObserver
    ) throws(BackendError) {
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var done: Int64 = 0
        while done < count {
            if observer.isCancelled {
                throw BackendError(.cancelled, "transfer cancelled", path: source.path)
            }
            let want = Int(min(Int64(chunkSize), count - done))
            if buffer.count != want { buffer = [UInt8](repeating: 0, count: want) }
            let got = try source.read(into: &buffer, at: sourceOffset + done)
            if got == 0 {
                throw BackendError(.changedDuringTransfer, "source became shorter while being copied", path: source.path)
            }
            try destination.write(buffer, count: got, at: destinationOffset + done)
            done += Int64(got)
            let pause = observer.bytesTransferred(got)
            if pause > .zero { sleepBlocking(pause) }
        }
    }

    /// Sleeps the current (blocking-I/O) thread.
    public static func sleepBlocking(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
