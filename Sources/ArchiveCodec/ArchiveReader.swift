internal import CArchive
import FerryPluginAPI
import FerrySystem

/// Reads an archive file entry by entry (any format and compression libarchive knows:
/// tar with gzip/bzip2/xz/zstd, zip, 7z, …): libarchive's read API behind Swift values.
///
/// Not Sendable, like `ArchiveWriter`: one handle, used from one blocking-I/O closure.
/// Entries come in archive order; after `nextEntry()` the entry's data can be extracted
/// once (`extract(to:)`), or is skipped by the next `nextEntry()`.
public final class ArchiveReader {
    public let path: String
    private let handle: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    public init(path: String) throws(ArchiveError) {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        guard let handle = archive_read_new() else {
            throw ArchiveError(.io, "cannot start reading an archive (out of memory)", path: path)
        }
        self.path = path
        self.handle = handle
        archive_read_support_filter_all(handle)
        archive_read_support_format_all(handle)
        // `deinit` frees the handle, also when `init` throws from here on.
        guard archive_read_open_filename(handle, path, 1 << 16) == ARCHIVE_OK else {
            throw ArchiveError(.damaged, "cannot open the archive", path: path, cause: ArchiveWriter.message(handle))
        }
    }

    deinit {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        archive_read_free(handle)
    }

    /// The next entry's header, or nil at the end of the archive. A damaged or truncated
    /// archive throws `damaged` here (or in `extract`), never a made-up entry.
    public func nextEntry() throws(ArchiveError) -> ArchiveEntry? {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
            throw ArchiveError(.damaged, "the archive is damaged or cut short", path: path, cause: ArchiveWriter.message(handle))
        }
        let rawName = archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry)
        let name = rawName.map { String(cString: $0) } ?? ""
        let hardLink = archive_entry_hardlink_utf8(entry) ?? archive_entry_hardlink(entry)
        let symbolicLink = archive_entry_symlink_utf8(entry) ?? archive_entry_symlink(entry)
        let type = UInt32(archive_entry_filetype(entry))
        let kind: ArchiveEntry.Kind
        if hardLink != nil {
            kind = .hardLink
        } else if type == CArchive_filetype_regular() {
            kind = .file
        } else if type == CArchive_filetype_directory() {
            kind = .directory
        } else if type == CArchive_filetype_symbolic_link() {
            kind = .symbolicLink
        } else {
            kind = .other
        }
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        let modified: Int64? = archive_entry_mtime_is_set(entry) != 0
            ? Int64(archive_entry_mtime(entry)) * 1_000_000_000 + Int64(archive_entry_mtime_nsec(entry))
            : nil
        return ArchiveEntry(name: name, kind: kind, size: size, modifiedNanos: modified,
                            linkTarget: (hardLink ?? symbolicLink).map { String(cString: $0) })
    }

    /// Writes the current entry's data to `destination` (created or truncated, mode 0644),
    /// flushed to disk unless `flush` is false (the caller flushes many files at once), and
    /// returns its length and SHA-256. A damaged or truncated archive throws; the caller
    /// removes what was written.
    public func extract(to destination: String, flush: Bool = true) throws(ArchiveError) -> ArchiveMemberData {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        let file: OpenFile
        do {
            file = try OpenFile(destination, mode: .writeTruncate)
        } catch {
            throw ArchiveError(.io, "cannot create the file", path: destination, cause: error.description)
        }
        var hash = MemberHash()
        var offset: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in archive_read_data(handle, raw.baseAddress, raw.count) }
            if count == 0 { break }
            guard count > 0 else {
                throw ArchiveError(.damaged, "the archive is damaged or cut short", path: path, cause: ArchiveWriter.message(handle))
            }
            hash.update(buffer[0..<count])
            do {
                try file.write(buffer, count: count, at: offset)
            } catch {
                throw ArchiveError(.io, "cannot write the file", path: destination, cause: error.description)
            }
            offset += Int64(count)
        }
        do throws(BackendError) {
            if flush { try BackendError.catching { try file.sync() } }
        } catch {
            throw ArchiveError(.io, "cannot flush the file", path: destination, cause: error.description)
        }
        return ArchiveMemberData(bytes: offset, sha256: hash.finalizeHex())
    }

    /// Every entry's header, reading the whole archive (for listings).
    public func allEntries() throws(ArchiveError) -> [ArchiveEntry] {
        var entries: [ArchiveEntry] = []
        while let entry = try nextEntry() { entries.append(entry) }
        return entries
    }
}
