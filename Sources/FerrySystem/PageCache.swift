import Glibc

/// What the kernel holds of a file in its page cache, for tests of code that is meant to
/// leave none of it there.
public enum PageCache {
    /// Bytes of the file at `path` that are in the page cache (`mincore` over a read-only
    /// mapping), counted in whole pages; nil where the file cannot be opened or mapped.
    public static func residentBytes(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        guard size > 0 else { return 0 }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else { return nil }
        defer { munmap(mapping, size) }
        let page = sysconf(Int32(_SC_PAGESIZE))
        var resident = [UInt8](repeating: 0, count: (size + page - 1) / page)
        guard mincore(mapping, size, &resident) == 0 else { return nil }
        return resident.reduce(0) { $0 + Int($1 & 1) } * page
    }

    /// True where the kernel drops a file's pages when asked (`POSIX_FADV_DONTNEED` on a
    /// flushed file): not on tmpfs, whose pages are the files themselves.
    public static func canDrop(in folder: String) -> Bool {
        let probe = folder + "/.page-cache-probe"
        defer { unlink(probe) }
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let bytes = [UInt8](repeating: 1, count: 1 << 16)
        let written = write(fd, bytes, bytes.count)
        let dropped = written == bytes.count && fsync(fd) == 0
            && posix_fadvise(fd, 0, off_t(bytes.count), POSIX_FADV_DONTNEED) == 0
        close(fd)
        return dropped && residentBytes(probe) == 0
    }
}
