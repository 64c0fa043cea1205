internal import CArchive
import FerryPluginAPI
import FerrySystem

/// Reads an archive file entry by entry: libarchive's read API behind Swift values, with
/// only the formats and compression filters the caller accepts (`Acceptance`), never a
/// filter that runs an external program.
///
/// Not Sendable, like `ArchiveWriter`: one handle, used from one blocking-I/O closure.
/// Entries come in archive order; after `nextEntry()` the entry's data can be extracted
/// once (`extract(to:)`), or is skipped by the next `nextEntry()`.
public final class ArchiveReader {
    /// What an archive may be, for it to be read at all.
    public enum Acceptance: Sendable {
        /// What Ferry writes bundles in (`ArchiveFormat`): tar (pax, ustar, GNU) and zip,
        /// uncompressed or with gzip or zstd built into libarchive. A bundle from a remote
        /// is untrusted: libarchive's `filter_all` would start an external `lrzip`, `lzop`
        /// or `grzip` for a file that asks for it.
        case bundles
        /// Any archive format libarchive reads (`ferry ls --archive-contents`: zip, tar,
        /// 7z, rar, cpio, iso9660, …), with the filters built into it. Not mtree, whose
        /// reader opens the local files an archive names, nor raw.
        case anyBuiltIn
    }

    public let path: String
    private let handle: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    public init(path: String, accepting acceptance: Acceptance = .bundles) throws(ArchiveError) {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        guard let handle = archive_read_new() else {
            throw ArchiveError(.io, "cannot start reading an archive (out of memory)", path: path)
        }
        self.path = path
        self.handle = handle
        // `deinit` frees the handle, also when `init` throws from here on.
        switch acceptance {
        case .bundles:
            archive_read_support_format_tar(handle)
            archive_read_support_format_zip(handle)
            for filter in [ReadFilter.gzip, .zstd] where filter.register(on: handle) != ARCHIVE_OK {
                // ARCHIVE_WARN: this libarchive would run an external program for it.
                throw ArchiveError(.unsupported, "the linked libarchive has no built-in \(filter) support; "
                                   + "refusing to read bundles through an external program", path: path)
            }
        case .anyBuiltIn:
            for register in [archive_read_support_format_7zip, archive_read_support_format_ar, archive_read_support_format_cab,
                             archive_read_support_format_cpio, archive_read_support_format_iso9660,
                             archive_read_support_format_lha, archive_read_support_format_rar, archive_read_support_format_rar5,
                             archive_read_support_format_tar, archive_read_support_format_xar, archive_read_support_format_zip] {
                _ = register(handle)
            }
            for filter in ReadFilter.builtIn { _ = filter.register(on: handle) }
        }
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
    ///
    /// At most `limit` bytes are written: the first byte past it throws `oversized`, so a
    /// member that declares (or whose manifest gives) 5 bytes cannot fill the disk with the
    /// gigabyte a small compressed archive can hold.
    public func extract(to destination: String, flush: Bool = true, limit: Int64 = .max) throws(ArchiveError) -> ArchiveMemberData {
        let file: OpenFile
        do {
            file = try OpenFile(destination, mode: .writeTruncate)
        } catch {
            throw ArchiveError(.io, "cannot create the file", path: destination, cause: error.description)
        }
        return try extract(into: file, named: destination, flush: flush, limit: limit)
    }

    /// The same into a file the caller opened (`named` for messages): one created through
    /// a folder handle that never follows a link, so that a folder swapped for a link
    /// while a bundle is restored cannot send the bytes elsewhere.
    public func extract(into file: OpenFile, named destination: String, flush: Bool = true,
                        limit: Int64 = .max) throws(ArchiveError) -> ArchiveMemberData {
        let locale = CArchive_enter_utf8_locale()
        defer { CArchive_leave_utf8_locale(locale) }
        var hash = MemberHash()
        var offset: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in archive_read_data(handle, raw.baseAddress, raw.count) }
            if count == 0 { break }
            guard count > 0 else {
                throw ArchiveError(.damaged, "the archive is damaged or cut short", path: path, cause: ArchiveWriter.message(handle))
            }
            guard Int64(count) <= limit - offset else {
                throw ArchiveError(.oversized, "the member holds more than \(limit) bytes", path: path)
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

/// A compression filter libarchive can read, registered one by one: `filter_all` also
/// registers external-program readers (`lrzip -d`, `lzop -d`, `grzip -d`, and any filter
/// whose library libarchive was built without).
enum ReadFilter: String, CaseIterable, CustomStringConvertible {
    case bzip2, compress, gzip, grzip, lrzip, lz4, lzip, lzma, lzop, rpm, uu, xz, zstd

    var description: String { rawValue }

    /// ARCHIVE_OK when built in, ARCHIVE_WARN when it would run an external program.
    func register(on handle: OpaquePointer) -> Int32 {
        switch self {
        case .bzip2: return archive_read_support_filter_bzip2(handle)
        case .compress: return archive_read_support_filter_compress(handle)
        case .gzip: return archive_read_support_filter_gzip(handle)
        case .grzip: return archive_read_support_filter_grzip(handle)
        case .lrzip: return archive_read_support_filter_lrzip(handle)
        case .lz4: return archive_read_support_filter_lz4(handle)
        case .lzip: return archive_read_support_filter_lzip(handle)
        case .lzma: return archive_read_support_filter_lzma(handle)
        case .lzop: return archive_read_support_filter_lzop(handle)
        case .rpm: return archive_read_support_filter_rpm(handle)
        case .uu: return archive_read_support_filter_uu(handle)
        case .xz: return archive_read_support_filter_xz(handle)
        case .zstd: return archive_read_support_filter_zstd(handle)
        }
    }

    /// The filters this libarchive has built in, learnt once on a scratch handle (a
    /// registration cannot be undone).
    static let builtIn: [ReadFilter] = allCases.filter { filter in
        guard let scratch = archive_read_new() else { return false }
        defer { archive_read_free(scratch) }
        return filter.register(on: scratch) == ARCHIVE_OK
    }
}
