public import FerryPluginAPI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, typed wrappers over the POSIX calls Ferry needs on local files, by path. Every
/// failure is a `SystemError` naming the path, the operation and the errno; nothing here
/// retries. Writes inside a synced folder go through `AnchoredFolder` instead, which never
/// follows a symbolic link.
public enum LocalFileSystem {
    /// `lstat`: nil when nothing is at `path`.
    public static func metadata(_ path: String) throws(SystemError) -> FileMetadata? {
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw SystemError(code, "cannot read file information", path: path)
        }
        return metadata(from: info)
    }

    /// `stat`, following a symbolic link.
    public static func metadataFollowingLinks(_ path: String) throws(SystemError) -> FileMetadata? {
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR || code == ELOOP { return nil }
            throw SystemError(code, "cannot read file information", path: path)
        }
        return metadata(from: info)
    }

    static func metadata(from info: stat) -> FileMetadata {
        let type = info.st_mode & S_IFMT
        let kind: FileMetadata.Kind
        switch type {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        #if canImport(Glibc)
        let nanos = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #else
        let nanos = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        let changed = Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #endif
        return FileMetadata(
            kind: kind, size: Int64(info.st_size), modifiedNanos: nanos,
            inode: UInt64(info.st_ino), device: UInt64(info.st_dev), permissions: UInt32(info.st_mode & 0o7777),
            changedNanos: changed)
    }

    /// A folder's entries: names that are valid UTF-8, and a count of those that are not
    /// (they cannot round-trip through a String and are reported, never touched).
    public struct DirectoryListing: Sendable {
        public var names: [String]
        /// Lossy renderings of the names that are not valid UTF-8, for messages.
        public var undecodableNames: [String]
    }

    /// The names in a folder, without `.` and `..`.
    public static func directoryListing(_ path: String) throws(SystemError) -> DirectoryListing {
        guard let dir = opendir(path) else {
            throw SystemError(errno, "cannot list folder", path: path)
        }
        defer { closedir(dir) }
        return names(in: dir)
    }

    /// The names an open directory stream gives, without `.` and `..`.
    static func names(in dir: OpaquePointer) -> DirectoryListing {
        var listing = DirectoryListing(names: [], undecodableNames: [])
        // glibc's dirent records are only as long as their name (d_reclen): copying the
        // declared 256-byte d_name reads past a record at the end of readdir's buffer and
        // crashed on a folder of 1,000 files. The name is read up to its NUL instead.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            let name = UnsafeRawPointer(entry).advanced(by: nameOffset)
            let bytes = Array(UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self))))
            guard let name = String(validating: bytes, as: UTF8.self) else {
                listing.undecodableNames.append(String(decoding: bytes, as: UTF8.self))
                continue
            }
            if name != "." && name != ".." { listing.names.append(name) }
        }
        return listing
    }

    /// A folder's entries with what `lstat` says of each.
    public struct MetadataListing: Sendable {
        public struct Entry: Sendable {
            public var name: String
            /// Nil when the entry went between the listing and its `lstat`, or cannot be read.
            public var metadata: FileMetadata?
        }

        public var entries: [Entry]
        /// Lossy renderings of the names that are not valid UTF-8, for messages.
        public var undecodableNames: [String]
    }

    /// The names in a folder, without `.` and `..`, each with its `lstat` made relative to
    /// the open folder: a tree walk then costs no path lookup from the root per file (4% of
    /// a 100,000-file no-op push went to the kernel walking absolute paths).
    public static func directoryListingWithMetadata(_ path: String) throws(SystemError) -> MetadataListing {
        guard let dir = opendir(path) else {
            throw SystemError(errno, "cannot list folder", path: path)
        }
        defer { closedir(dir) }
        let listing = names(in: dir)
        let folder = dirfd(dir)
        var entries: [MetadataListing.Entry] = []
        entries.reserveCapacity(listing.names.count)
        for name in listing.names {
            var info = stat()
            let found = fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0
            entries.append(MetadataListing.Entry(name: name, metadata: found ? metadata(from: info) : nil))
        }
        return MetadataListing(entries: entries, undecodableNames: listing.undecodableNames)
    }

    /// The valid UTF-8 names of the folders in a folder (not links to folders), read from
    /// the directory entries' types where the file system gives them, so that finding the
    /// folders of a large tree costs a read per folder rather than a `stat` per file.
    public static func subfolderNames(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else {
            throw SystemError(errno, "cannot list folder", path: path)
        }
        defer { closedir(dir) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var folders: [String] = []
        while let entry = readdir(dir) {
            let type = Int(entry.pointee.d_type)
            guard type == Int(DT_DIR) || type == Int(DT_UNKNOWN) else { continue }
            let name = UnsafeRawPointer(entry).advanced(by: nameOffset)
            let bytes = Array(UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self))))
            guard let name = String(validating: bytes, as: UTF8.self), name != ".", name != ".." else { continue }
            if type == Int(DT_UNKNOWN), (try? metadata(join(path, name)))??.kind != .directory { continue }
            folders.append(name)
        }
        return folders
    }

    /// The valid UTF-8 names in a folder, without `.` and `..`.
    public static func directoryEntries(_ path: String) throws(SystemError) -> [String] {
        try directoryListing(path).names
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String, permissions: UInt32 = 0o755) throws(SystemError) {
        if let existing = try metadataFollowingLinks(path) {
            if existing.kind == .directory { return }
            throw SystemError(EEXIST, "a file is in the way of a folder", path: path)
        }
        let parent = parentPath(path)
        if parent != path && !parent.isEmpty { try makeDirectories(parent, permissions: permissions) }
        if mkdir(path, mode_t(permissions)) != 0 && errno != EEXIST {
            throw SystemError(errno, "cannot create folder", path: path)
        }
    }

    /// `makeDirectories` for a folder of this user's alone (the state folder): made 0700,
    /// and one that exists already with access for others (made 0755 by hand or by an
    /// older tool) is narrowed to 0700, since a journal in it would be readable by every
    /// user. One that belongs to another user is refused.
    public static func makePrivateDirectories(_ path: String) throws(SystemError) {
        try makeDirectories(path, permissions: 0o700)
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(errno, "cannot look at folder", path: path) }
        guard info.st_uid == getuid() else {
            throw SystemError(EPERM, "the folder belongs to another user; use a state folder of your own", path: path)
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw SystemError(errno, "cannot make the folder private (chmod 700)", path: path)
        }
    }

    /// A new folder of this user's alone (mode 0700, a random name that did not exist, made
    /// by `mkdtemp`) in `parent`: what is unpacked there cannot be read, or the folder be
    /// planted beforehand, by another user of a shared `/tmp`.
    public static func makePrivateTemporaryDirectory(in parent: String, prefix: String) throws(SystemError) -> String {
        var template = Array(join(parent, prefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else { throw SystemError(errno, "cannot create a private folder", path: parent) }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        if Glibc.rename(source, destination) != 0 {
            throw SystemError(errno, "cannot rename to '\(destination)'", path: source)
        }
    }

    /// Removes a file; succeeds when it is already gone.
    public static func removeFile(_ path: String) throws(SystemError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw SystemError(errno, "cannot remove file", path: path)
        }
    }

    /// Removes an empty folder; succeeds when it is already gone.
    public static func removeDirectory(_ path: String) throws(SystemError) {
        if rmdir(path) != 0 && errno != ENOENT {
            throw SystemError(errno, "cannot remove folder", path: path)
        }
    }

    /// Sets the modification time (and access time to the same) with nanosecond precision.
    public static func setModificationTime(_ path: String, nanos: Int64) throws(SystemError) {
        var times = [timespec](repeating: timespec(), count: 2)
        let spec = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        times[0] = spec
        times[1] = spec
        if utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) != 0 {
            throw SystemError(errno, "cannot set modification time", path: path)
        }
    }

    /// Flushes a folder's entries (a rename inside it) to disk.
    public static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// Bytes available to an unprivileged writer, and the size, of the filesystem holding `path`.
    public static func filesystemSpace(_ path: String) throws(SystemError) -> (available: Int64, total: Int64) {
        var info = statvfs()
        if statvfs(path, &info) != 0 { throw SystemError(errno, "cannot read free space", path: path) }
        return (Int64(info.f_bavail) * Int64(info.f_frsize), Int64(info.f_blocks) * Int64(info.f_frsize))
    }

    public static func parentPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    public static func join(_ base: String, _ relative: String) -> String {
        if relative.isEmpty { return base }
        return base.hasSuffix("/") ? base + relative : base + "/" + relative
    }

    public static var currentDirectory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An absolute, `.`/`..`-free version of `path` (without resolving symbolic links).
    public static func absolute(_ path: String, relativeTo base: String? = nil) -> String {
        let start = path.hasPrefix("/") ? path : join(base ?? currentDirectory, path)
        var parts: [Substring] = []
        for part in start.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

extension LocalFileSystem {
    /// `~` and `~/…` with the home folder from the environment; other paths unchanged.
    public static func expandingHome(_ path: String, environment: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = environment["HOME"], !home.isEmpty else { return path }
        return home + path.dropFirst()
    }

    /// The canonical path with every symbolic link resolved, or nil when it does not resolve.
    public static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
