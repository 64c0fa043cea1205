public import FerryPluginAPI
internal import CFerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder opened once, below which every create, open, rename, delete and time change is
/// made relative to open directory descriptors, one name at a time, never following a
/// symbolic link (`openat`/`mkdirat`/`renameat`/`unlinkat`/`utimensat` with `O_NOFOLLOW` /
/// `AT_SYMLINK_NOFOLLOW`).
///
/// A symbolic link planted in a synced folder (`sub -> /outside`, or `.x.jpg.ferry-part ->
/// ~/.bashrc`), statically or swapped in for a real folder while a transfer runs, can so
/// never redirect a write out of the folder: the walk meets the link and the operation
/// fails with a `SystemError` whose `isSymbolicLink` is true. The anchor itself is the
/// folder the user configured and may be reached through links; nothing below it is.
///
/// Paths are relative ("2024/IMG_1.jpg"); empty, `.` and `..` components are refused.
///
/// Sendable: the descriptor and path are constants; each operation opens and closes its
/// own descriptors for the walk, and the anchor's descriptor is closed only in `deinit`.
public final class AnchoredFolder: Sendable {
    /// The folder's path as configured, for messages.
    public let path: String
    private let descriptor: Int32

    /// Opens `path` as the anchor; with `create`, makes it (and its parents) first.
    public init(_ path: String, create: Bool = false) throws(SystemError) {
        if create { try LocalFileSystem.makeDirectories(path) }
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(errno, "cannot open folder", path: path) }
        self.path = path
        descriptor = fd
    }

    /// A folder below another anchor, already reached without links (`folder(_:creating:)`).
    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// The folder `relative` below this one ("" for this one), opened as an anchor of its
    /// own, reached without following a link; with `creating`, it and missing parents are
    /// made first. Several operations on the names in one folder (an upload's checks, its
    /// temporary file and its rename) then walk the path once instead of once each.
    public func folder(_ relative: String, creating permissions: UInt32? = nil) throws(SystemError) -> AnchoredFolder {
        if relative.isEmpty { return self }
        let full = fullPath(relative)
        let fd = try withParent(of: relative, creating: permissions) { parent, name throws(SystemError) -> Int32 in
            let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
            var fd = openat(parent, name, flags)
            if fd < 0, errno == ENOENT, let permissions {
                if mkdirat(parent, name, mode_t(permissions)) != 0 && errno != EEXIST {
                    throw SystemError(errno, "cannot create folder", path: full)
                }
                fd = openat(parent, name, flags)
            }
            guard fd >= 0 else {
                switch Self.linkAware(errno, parent: parent, name: name) {
                case ELOOP: throw SystemError(ELOOP, "a symbolic link is where a folder should be", path: full)
                // The same error as `makeDirectories` gives for a file at the name.
                case ENOTDIR: throw SystemError(EEXIST, "a file is in the way of a folder", path: full)
                case let code: throw SystemError(code, "cannot open folder", path: full)
                }
            }
            return fd
        }
        return AnchoredFolder(descriptor: fd, path: full)
    }

    /// The absolute path of `relative`, for messages and for code that must hand a path on.
    public func fullPath(_ relative: String) -> String {
        relative.isEmpty ? path : LocalFileSystem.join(path, relative)
    }

    // MARK: - Reading

    /// What is at `relative`, without following a link there (`lstat`); nil when nothing
    /// is. A link among the parents is an error, not "nothing there".
    public func metadata(_ relative: String) throws(SystemError) -> FileMetadata? {
        if relative.isEmpty {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw SystemError(errno, "cannot read file information", path: path) }
            return LocalFileSystem.metadata(from: info)
        }
        do {
            return try withParent(of: relative) { parent, name throws(SystemError) -> FileMetadata? in
                var info = stat()
                if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                    let code = errno
                    if code == ENOENT || code == ENOTDIR { return nil }
                    throw SystemError(code, "cannot read file information", path: fullPath(relative))
                }
                return LocalFileSystem.metadata(from: info)
            }
        } catch where error.isNotFound {
            return nil
        }
    }

    /// When `relative` was last read (its access time, in nanoseconds), without following a
    /// link; nil when nothing is there. Filesystems mounted `noatime` keep the time of the
    /// last write; `relatime` (Linux's default) updates it at most once a day.
    public func accessedNanos(_ relative: String) throws(SystemError) -> Int64? {
        do {
            return try withParent(of: relative) { parent, name throws(SystemError) -> Int64? in
                var info = stat()
                if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                    let code = errno
                    if code == ENOENT || code == ENOTDIR { return nil }
                    throw SystemError(code, "cannot read file information", path: fullPath(relative))
                }
                #if canImport(Glibc)
                return Int64(info.st_atim.tv_sec) * 1_000_000_000 + Int64(info.st_atim.tv_nsec)
                #else
                return Int64(info.st_atimespec.tv_sec) * 1_000_000_000 + Int64(info.st_atimespec.tv_nsec)
                #endif
            }
        } catch where error.isNotFound {
            return nil
        }
    }

    /// The entries of the folder `relative` ("" for the anchor) with what each is, links
    /// and other special files included as such (never followed).
    public func entries(_ relative: String) throws(SystemError) -> [(name: String, metadata: FileMetadata)] {
        let folder = try openFolder(relative)
        guard let dir = fdopendir(folder) else {
            let code = errno
            close(folder)
            throw SystemError(code, "cannot list folder", path: fullPath(relative))
        }
        defer { closedir(dir) }
        var result: [(name: String, metadata: FileMetadata)] = []
        for name in LocalFileSystem.names(in: dir).names {
            var info = stat()
            guard fstatat(dirfd(dir), name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            result.append((name, LocalFileSystem.metadata(from: info)))
        }
        return result
    }

    /// A new descriptor for the folder `relative` ("" for the anchor), reached without links.
    private func openFolder(_ relative: String) throws(SystemError) -> Int32 {
        if relative.isEmpty {
            let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError(errno, "cannot open folder", path: path) }
            return fd
        }
        return try withParent(of: relative) { parent, name throws(SystemError) -> Int32 in
            let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                throw SystemError(Self.linkAware(errno, parent: parent, name: name), "cannot open folder", path: fullPath(relative))
            }
            return fd
        }
    }

    /// Bytes available to an unprivileged writer, and the size, of the anchor's filesystem.
    public func filesystemSpace() throws(SystemError) -> (available: Int64, total: Int64) {
        var info = statvfs()
        if fstatvfs(descriptor, &info) != 0 { throw SystemError(errno, "cannot read free space", path: path) }
        return (Int64(info.f_bavail) * Int64(info.f_frsize), Int64(info.f_blocks) * Int64(info.f_frsize))
    }

    // MARK: - Opening files

    /// How a file is opened below the anchor. None of them follows a link at the name.
    public enum OpenMode: Sendable {
        /// An existing regular file, for reading.
        case read
        /// An existing regular file, for writing at offsets (continuing a partial file).
        case writeExisting
        /// A new file that must not exist yet (`O_EXCL`): a temporary name nobody else uses.
        case createNew
        /// A file created if missing, its bytes kept (a partial file that may be continued).
        case createOrKeep
    }

    /// Opens a regular file below the anchor. Anything else at the name (a link, a folder,
    /// a FIFO that would block the open) is refused.
    public func open(_ relative: String, _ mode: OpenMode, permissions: UInt32 = 0o644) throws(SystemError) -> OpenFile {
        try openFile(relative, mode, permissions: permissions).file
    }

    /// `open`, with what the file was when opened (its `fstat`), for a caller that needs it
    /// anyway: one system call fewer per small file. A file made here (`createNew`) is not
    /// looked at: `O_CREAT | O_EXCL` made it, a new regular file, or failed.
    public func openFile(_ relative: String, _ mode: OpenMode,
                         permissions: UInt32 = 0o644) throws(SystemError) -> (file: OpenFile, metadata: FileMetadata?) {
        let full = fullPath(relative)
        return try withParent(of: relative) { parent, name throws(SystemError) -> (file: OpenFile, metadata: FileMetadata?) in
            // O_NONBLOCK keeps a planted FIFO from blocking the open; it changes nothing
            // for regular files.
            var flags = O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
            switch mode {
            case .read: flags |= O_RDONLY
            case .writeExisting: flags |= O_WRONLY
            case .createNew: flags |= O_WRONLY | O_CREAT | O_EXCL
            case .createOrKeep: flags |= O_WRONLY | O_CREAT
            }
            let fd = openat(parent, name, flags, mode_t(permissions))
            guard fd >= 0 else {
                throw SystemError(errno, mode == .read ? "cannot open for reading" : "cannot open for writing", path: full)
            }
            if mode == .createNew { return (OpenFile(descriptor: fd, path: full), nil) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw SystemError(EINVAL, "not a regular file", path: full)
            }
            return (OpenFile(descriptor: fd, path: full), LocalFileSystem.metadata(from: info))
        }
    }

    // MARK: - Changing the tree

    /// Creates the folder `relative` and any missing parents; fine when it exists. A link
    /// or a file in the way is an error.
    public func makeDirectories(_ relative: String, permissions: UInt32 = 0o755) throws(SystemError) {
        guard !relative.isEmpty else { return }
        try withParent(of: relative, creating: permissions) { parent, name throws(SystemError) in
            if mkdirat(parent, name, mode_t(permissions)) == 0 { return }
            let code = errno
            guard code == EEXIST else { throw SystemError(code, "cannot create folder", path: fullPath(relative)) }
            var info = stat()
            guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw SystemError(errno, "cannot create folder", path: fullPath(relative))
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: return
            case S_IFLNK: throw SystemError(ELOOP, "a symbolic link is where a folder should be", path: fullPath(relative))
            default: throw SystemError(EEXIST, "a file is in the way of a folder", path: fullPath(relative))
            }
        }
    }

    /// Renames `source` to `destination` (both below this anchor, or `destination` below
    /// `other`). With `replacing: false` an existing target fails with EEXIST, atomically.
    public func rename(_ source: String, to destination: String, in other: AnchoredFolder? = nil,
                       replacing: Bool = true) throws(SystemError) {
        let target = other ?? self
        try withParent(of: source) { sourceParent, sourceName throws(SystemError) in
            try target.withParent(of: destination) { targetParent, targetName throws(SystemError) in
                let status = replacing
                    ? renameat(sourceParent, sourceName, targetParent, targetName)
                    : CFerrySystem_renameat_noreplace(sourceParent, sourceName, targetParent, targetName)
                if status != 0 {
                    throw SystemError(errno, "cannot rename to '\(target.fullPath(destination))'", path: fullPath(source))
                }
            }
        }
    }

    /// A new file in this folder with no name yet (`O_TMPFILE`), for writing; `link` names
    /// it, and it is gone when dropped unnamed. Messages about it give the name it is meant
    /// to get, `intended`. Throws where the filesystem cannot make one (`EOPNOTSUPP`), or
    /// when `/proc` is not there to name it (`namesUnnamedFiles`).
    public func createUnnamed(for intended: String, permissions: UInt32 = 0o644) throws(SystemError) -> OpenFile {
        let full = fullPath(intended)
        guard Self.namesUnnamedFiles else { throw SystemError(EOPNOTSUPP, "cannot name a file made without a name", path: full) }
        let fd = CFerrySystem_open_unnamed(descriptor, permissions)
        guard fd >= 0 else { throw SystemError(errno, "cannot open for writing", path: full) }
        return OpenFile(descriptor: fd, path: full)
    }

    /// Gives a file made by `createUnnamed` in this folder the name `name`; an existing
    /// name (a file or a folder) fails with `EEXIST` and is left as it was.
    public func link(_ file: OpenFile, as name: String) throws(SystemError) {
        try link(file, as: name, throughProc: false)
    }

    /// `link`; `throughProc` takes the way every process may (through `/proc`) even where
    /// the shorter one is allowed, as on a kernel before 6.10 without the privilege.
    func link(_ file: OpenFile, as name: String, throughProc: Bool) throws(SystemError) {
        try withParent(of: name) { parent, last throws(SystemError) in
            if CFerrySystem_link_unnamed(file.descriptor, parent, last, throughProc ? 1 : 0) != 0 {
                throw SystemError(errno, "cannot give the written file its name", path: fullPath(name))
            }
        }
    }

    /// Whether a file made without a name can be given one: through `/proc/self/fd`, so
    /// only where `/proc` is mounted (a container may not have it).
    static let namesUnnamedFiles: Bool = access("/proc/self/fd", X_OK) == 0

    /// `createUnnamed`, or nil where the file would better have a temporary name: a
    /// filesystem without `O_TMPFILE` (some network mounts), no `/proc`, or too few files
    /// open at once. Whoever writes files with no name keeps each open until it is named,
    /// up to about 600 at once (a batch waiting to be put in place), so only with a
    /// descriptor limit well above that (raised here from Debian's default 1,024).
    public func createUnnamedIfSuited(for intended: String) -> OpenFile? {
        guard Self.holdsManyOpenFiles else { return nil }
        return try? createUnnamed(for: intended)
    }

    private static let holdsManyOpenFiles = DescriptorLimit.raise() >= 4_096

    /// Removes a file (or the link itself, never what it points to); fine when it is gone.
    public func removeFile(_ relative: String) throws(SystemError) {
        try unlink(relative, flags: 0, operation: "cannot remove file")
    }

    /// Removes an empty folder; fine when it is gone.
    public func removeDirectory(_ relative: String) throws(SystemError) {
        try unlink(relative, flags: AT_REMOVEDIR, operation: "cannot remove folder")
    }

    /// Sets the modification time (and access time to the same), to the nanosecond.
    public func setModificationTime(_ relative: String, nanos: Int64) throws(SystemError) {
        try withParent(of: relative) { parent, name throws(SystemError) in
            let seconds = nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
            let spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanos - seconds * 1_000_000_000))
            let times = [spec, spec]
            if utimensat(parent, name, times, AT_SYMLINK_NOFOLLOW) != 0 {
                throw SystemError(errno, "cannot set modification time", path: fullPath(relative))
            }
        }
    }

    /// Flushes the entries of the folder holding `relative` (a rename into it) to disk.
    public func syncFolder(containing relative: String) {
        try? withParent(of: relative) { parent, _ throws(SystemError) in _ = fsync(parent) }
    }

    /// Flushes everything written to the anchor's filesystem (`syncfs`): one call for a
    /// batch of files instead of an `fsync` each. Throws when a write-back failed (Linux
    /// reports it to `syncfs` since 5.8).
    public func syncFilesystem() throws(SystemError) {
        if CFerrySystem_syncfs(descriptor) != 0 { throw SystemError(errno, "cannot flush to disk", path: path) }
    }

    // MARK: - The walk

    private func unlink(_ relative: String, flags: Int32, operation: String) throws(SystemError) {
        do {
            try withParent(of: relative) { parent, name throws(SystemError) in
                if unlinkat(parent, name, flags) != 0 && errno != ENOENT {
                    throw SystemError(errno, operation, path: fullPath(relative))
                }
            }
        } catch where error.code == ENOENT {
            return
        }
    }

    /// The names of a relative path, refusing what could leave the anchor.
    /// Split by bytes: by `Character`, the split was a twentieth of a small file's upload.
    static func names(_ relative: String, anchor: String) throws(SystemError) -> [Substring] {
        let names = relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard names.allSatisfy({ !$0.isEmpty && !$0.elementsEqual(".".utf8) && !$0.elementsEqual("..".utf8) }) else {
            throw SystemError(EINVAL, "not a path inside the folder", path: LocalFileSystem.join(anchor, relative))
        }
        return names.map { Substring($0) }
    }

    /// `O_DIRECTORY` with `O_NOFOLLOW` reports a link as "not a folder" (ENOTDIR): ELOOP
    /// for a link, so that the message says what is in the way.
    private static func linkAware(_ code: Int32, parent: Int32, name: String) -> Int32 {
        var info = stat()
        if code == ENOTDIR, fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK {
            return ELOOP
        }
        return code
    }

    /// Opens the folders leading to `relative` one at a time, never through a link, and
    /// runs `body` with the descriptor of its parent folder and its last name. With
    /// `creating`, missing folders on the way are made with those permissions.
    func withParent<T>(of relative: String, creating permissions: UInt32? = nil,
                       _ body: (Int32, String) throws(SystemError) -> T) throws(SystemError) -> T {
        let names = try Self.names(relative, anchor: path)
        var current = descriptor
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        var walked = path
        for name in names.dropLast() {
            walked = LocalFileSystem.join(walked, String(name))
            var next = openat(current, String(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, errno == ENOENT, let permissions {
                if mkdirat(current, String(name), mode_t(permissions)) != 0 && errno != EEXIST {
                    throw SystemError(errno, "cannot create folder", path: walked)
                }
                next = openat(current, String(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            guard next >= 0 else {
                let code = Self.linkAware(errno, parent: current, name: String(name))
                throw SystemError(code, code == ELOOP ? "a symbolic link is in the way" : "cannot open folder", path: walked)
            }
            opened.append(next)
            current = next
        }
        return try body(current, String(names[names.count - 1]))
    }
}
