import FerrySystem

/// One folder on each filesystem a batch of staged uploads is written to, to flush that
/// filesystem through. `syncfs` flushes only the filesystem of the folder it is given,
/// and a folder of the remote may be another disk mounted there (a USB disk inside the
/// backup folder): flushing the remote's root alone named files on that disk before
/// their bytes were on it. Small downloads flush the same way (`placeFetched`).
struct FilesystemFlushers: Sendable {
    private var flushers: [UInt64: AnchoredFolder] = [:]
    /// Folders already looked at, by path below the remote: a batch comes folder by
    /// folder, so each is asked for its filesystem once.
    private var seen: Set<String> = []

    /// Notes the filesystem of `folder`, at `path` below the remote.
    mutating func note(_ folder: AnchoredFolder, at path: String) throws(SystemError) {
        guard seen.insert(path).inserted else { return }
        guard let device = try folder.metadata("")?.device else { return }
        if flushers[device] == nil { flushers[device] = folder }
    }

    /// The filesystems noted so far, one folder each.
    var count: Int { flushers.count }

    /// Notes the filesystems `other` noted too, so one flush covers both.
    mutating func note(_ other: FilesystemFlushers) {
        flushers.merge(other.flushers) { mine, _ in mine }
    }

    /// Flushes every filesystem noted (`syncfs`); the first failure is thrown.
    func flush() throws(SystemError) {
        for folder in flushers.values { try folder.syncFilesystem() }
    }
}
