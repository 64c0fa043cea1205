internal import CArchive
import FerryPluginAPI
import FerrySystem

/// Writes one archive file member by member: libarchive's write API behind Swift values.
///
/// Not Sendable: it wraps one libarchive handle and is used from the single blocking-I/O
/// closure that creates it (libarchive calls block on the disk). `finish()` must be called
/// for the archive to be complete; a writer dropped without it leaves a file that readers
/// report as truncated, which is what a crash would leave too.
public final class ArchiveWriter {
    public let path: String
    public let format: ArchiveFormat
    private let handle: OpaquePointer
    private var finished = false
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    public init(path: String, format: ArchiveFormat) throws(ArchiveError) {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        guard let handle = archive_write_new() else {
            throw ArchiveError(.io, "cannot start an archive (out of memory)", path: path)
        }
        self.path = path
        self.format = format
        self.handle = handle
        let status: Int32
        switch format {
        case .tarZstd:
            status = archive_write_add_filter_zstd(handle) | archive_write_set_format_pax(handle)
        case .tarGzip:
            status = archive_write_add_filter_gzip(handle) | archive_write_set_format_pax(handle)
        case .zip:
            status = archive_write_set_format_zip(handle)
        }
        // ARCHIVE_OK is 0 and every failure is negative: an OR of the two is 0 only when
        // both succeeded.
        // From here on `deinit` frees the handle, also when `init` throws.
        guard status == ARCHIVE_OK else {
            finished = true
            throw ArchiveError(.unsupported, "this libarchive cannot write \(format.rawValue)", path: path, cause: Self.message(handle))
        }
        guard archive_write_open_filename(handle, path) == ARCHIVE_OK else {
            finished = true
            throw ArchiveError(.io, "cannot create the archive", path: path, cause: Self.message(handle))
        }
    }

    deinit {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        if !finished { archive_write_close(handle) }
        archive_write_free(handle)
    }

    /// Appends a regular file's bytes as member `entryName`, with this modification time.
    /// Exactly `size` bytes are stored: a source that turns out shorter is an error (the
    /// archive is then unusable and must be discarded), one that grew is cut at `size`
    /// (the caller compares the source's metadata before and after).
    public func append(file source: String, as entryName: String, size: Int64,
                       modifiedNanos: Int64) throws(ArchiveError) -> ArchiveMemberData {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        let file: OpenFile
        do {
            file = try OpenFile(source, mode: .read)
        } catch {
            throw ArchiveError(.io, "cannot read the file to archive", path: source, cause: error.description)
        }
        guard let entry = archive_entry_new() else {
            throw ArchiveError(.io, "cannot describe an archive member (out of memory)", path: source)
        }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, entryName)
        archive_entry_set_size(entry, size)
        archive_entry_set_filetype(entry, CArchive_filetype_regular())
        archive_entry_set_perm(entry, 0o644)
        let (seconds, nanos) = Self.split(modifiedNanos)
        archive_entry_set_mtime(entry, time_t(seconds), Int(nanos))
        guard archive_write_header(handle, entry) == ARCHIVE_OK else {
            throw ArchiveError(.io, "cannot write an archive member's header", path: path, cause: Self.message(handle))
        }

        var hash = MemberHash()
        var offset: Int64 = 0
        while offset < size {
            let want = Int(min(Int64(buffer.count), size - offset))
            let got: Int
            do {
                got = try file.read(into: &buffer, at: offset)
            } catch {
                throw ArchiveError(.io, "cannot read the file to archive", path: source, cause: error.description)
            }
            guard got > 0 else {
                throw ArchiveError(.truncated, "the file became shorter while it was archived", path: source)
            }
            let count = min(got, want)
            hash.update(buffer[0..<count])
            let written = buffer.withUnsafeBytes { raw in archive_write_data(handle, raw.baseAddress, count) }
            guard written == count else {
                throw ArchiveError(.io, "cannot write to the archive", path: path, cause: Self.message(handle))
            }
            offset += Int64(count)
        }
        return ArchiveMemberData(bytes: offset, sha256: hash.finalizeHex())
    }

    /// Writes the archive's trailer and closes the file; the archive is complete after this.
    public func finish() throws(ArchiveError) {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        guard !finished else { return }
        finished = true
        guard archive_write_close(handle) == ARCHIVE_OK else {
            throw ArchiveError(.io, "cannot finish the archive", path: path, cause: Self.message(handle))
        }
    }

    static func message(_ handle: OpaquePointer) -> String {
        archive_error_string(handle).map { String(cString: $0) } ?? "libarchive error \(archive_errno(handle))"
    }

    /// Whole seconds and the nanoseconds above them, rounding toward the past for times
    /// before 1970.
    static func split(_ nanos: Int64) -> (Int64, Int64) {
        var seconds = nanos / 1_000_000_000
        var rest = nanos % 1_000_000_000
        if rest < 0 {
            seconds -= 1
            rest += 1_000_000_000
        }
        return (seconds, rest)
    }
}
