public import FerryPluginAPI
internal import CFerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the value is dropped.
///
/// Sendable: both stored properties are constants, and every operation is one system call
/// on the descriptor with an explicit offset (`pread`/`pwrite`, `fstat`, `fsync`), which
/// the kernel makes safe from several threads; the descriptor is closed only in `deinit`,
/// after the last reference is gone. A file opened by the core (through `AnchoredFolder`,
/// never through a symbolic link) can so be handed to a backend that writes into it.
public final class OpenFile: Sendable {
    public let path: String
    let descriptor: Int32

    public enum Mode {
        case read
        /// An existing file, for writing at offsets (a partial file the core created).
        case writeExisting
        /// Create if missing, keep existing bytes (for resuming).
        case writeKeep
        /// Create if missing, drop existing bytes.
        case writeTruncate
    }

    /// Takes over an open descriptor (closed with the value).
    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path`. A symbolic link at the last name is refused (`ELOOP`) unless
    /// `followingLinks` (a file the user named, such as a CA bundle); files inside a synced
    /// folder are opened through `AnchoredFolder`, which refuses links anywhere below it.
    public init(_ path: String, mode: Mode, permissions: UInt32 = 0o644, followingLinks: Bool = false) throws(SystemError) {
        self.path = path
        var flags: Int32
        switch mode {
        case .read: flags = O_RDONLY | O_CLOEXEC
        case .writeExisting: flags = O_WRONLY | O_CLOEXEC
        case .writeKeep: flags = O_WRONLY | O_CREAT | O_CLOEXEC
        case .writeTruncate: flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
        }
        if !followingLinks { flags |= O_NOFOLLOW }
        let fd = open(path, flags, mode_t(permissions))
        if fd < 0 {
            throw SystemError(errno, mode == .read ? "cannot open for reading" : "cannot open for writing", path: path)
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    public func metadata() throws(SystemError) -> FileMetadata {
        var info = stat()
        if fstat(descriptor, &info) != 0 { throw SystemError(errno, "cannot read file information", path: path) }
        return LocalFileSystem.metadata(from: info)
    }

    public func truncate(to size: Int64) throws(SystemError) {
        if ftruncate(descriptor, off_t(size)) != 0 { throw SystemError(errno, "cannot truncate", path: path) }
    }

    public func sync() throws(SystemError) {
        if fsync(descriptor) != 0 { throw SystemError(errno, "cannot flush to disk", path: path) }
    }

    /// Flushes everything written to the file's filesystem (`syncfs`), this file's bytes
    /// and any other's: one call for a batch of files. Throws when a write-back failed.
    public func syncFilesystem() throws(SystemError) {
        if CFerrySystem_syncfs(descriptor) != 0 { throw SystemError(errno, "cannot flush to disk", path: path) }
    }

    /// Writes the dirty pages of `length` bytes from `offset` to disk and waits for them,
    /// leaving the rest of the file and its metadata alone (Linux `sync_file_range`): what
    /// one stream of a download needs before it vouches for its range, without stalling on
    /// the ranges other streams are still writing. Not a durability barrier on its own;
    /// `sync()` at the end is.
    public func flushRange(offset: Int64, length: Int64) throws(SystemError) {
        if CFerrySystem_flush_range(descriptor, offset, length) != 0 {
            throw SystemError(errno, "cannot flush to disk", path: path)
        }
    }

    /// Starts writing the dirty pages of `length` bytes from `offset` to disk and returns
    /// at once (Linux `sync_file_range` with `WRITE` alone).
    public func startWriteback(offset: Int64, length: Int64) throws(SystemError) {
        if CFerrySystem_start_writeback(descriptor, offset, length) != 0 {
            throw SystemError(errno, "cannot write to disk", path: path)
        }
    }

    /// Lets the kernel drop the cached pages of `length` bytes from `offset` (a hint,
    /// `POSIX_FADV_DONTNEED`; pages still dirty stay). For bytes already on disk that
    /// nobody is about to read.
    public func dropCached(offset: Int64, length: Int64) {
        _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_DONTNEED)
    }

    public func setModificationTime(nanos: Int64) throws(SystemError) {
        let spec = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        let times = [spec, spec]
        if futimens(descriptor, times) != 0 { throw SystemError(errno, "cannot set modification time", path: path) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the count read (0 at the end).
    public func read(into buffer: inout [UInt8], at offset: Int64) throws(SystemError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress, raw.count, off_t(offset))
            }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw SystemError(errno, "cannot read", path: path)
        }
    }

    /// Writes the first `count` bytes of `buffer` at `offset`, all of them.
    public func write(_ buffer: [UInt8], count: Int, at offset: Int64) throws(SystemError) {
        var done = 0
        while done < count {
            let written = buffer.withUnsafeBytes { raw in
                pwrite(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError(errno, "cannot write", path: path)
            }
            done += written
        }
    }

    /// Writes raw bytes at `offset`, all of them (for transports that hand over C buffers).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError(errno, "cannot write", path: path)
            }
            done += written
        }
    }

    /// Reads up to `bytes.count` bytes at `offset` into raw memory; returns the count read.
    public func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        while true {
            let count = pread(descriptor, bytes.baseAddress, bytes.count, off_t(offset))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw SystemError(errno, "cannot read", path: path)
        }
    }

    /// Copies up to `count` bytes of `source` from `sourceOffset` into this file at `offset`
    /// inside the kernel (`copy_file_range`; see `ChunkedCopy` for why). Returns the count
    /// copied, 0 at the source's end, or nil when the kernel or either filesystem cannot
    /// copy between these two files, so that the caller copies through a buffer instead.
    public func copy(from source: OpenFile, at sourceOffset: Int64, to offset: Int64, count: Int64) throws(SystemError) -> Int? {
        while true {
            let copied = CFerrySystem_copy_range(source.descriptor, sourceOffset, descriptor, offset, count)
            if copied >= 0 { return Int(copied) }
            switch errno {
            case EINTR: continue
            case EXDEV, EINVAL, EOPNOTSUPP, ENOSYS, EBADF: return nil
            default: throw SystemError(errno, "cannot copy", path: path)
            }
        }
    }

    /// Reads the whole file (for small files and tests).
    public func readAll() throws(SystemError) -> [UInt8] {
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
