import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// What `TreeWatch` needs from inotify; `InotifyInstance` in production, a recorder in tests.
public protocol WatchRegistrar: Sendable {
    func addWatch(_ path: String, mask: InotifyEvent.Mask) -> Result<Int32, InotifyInstance.WatchFailure>
    func removeWatch(_ watch: Int32)
}

extension InotifyInstance: WatchRegistrar {}

/// Keeps a folder tree watched (inotify watches one folder at a time) and turns raw events
/// into `FolderChange`s with paths relative to the root. New subfolders are watched as they
/// appear and reported for a scan, renamed folders are re-watched under their new path, and
/// ignored names (Ferry's own `.NAME.ferry-part` files, the ignore globs) are dropped.
public struct TreeWatch: Sendable {
    public let root: String
    private let ignore: GlobSet
    private let registrar: any WatchRegistrar
    /// Watch descriptor → folder relative to the root ("" for the root).
    private var folders: [Int32: String] = [:]
    /// Set once adding a watch failed for want of watches; the hint is logged once.
    public private(set) var watchLimitReached = false

    public init(root: String, ignore: GlobSet, registrar: any WatchRegistrar) {
        self.root = root
        self.ignore = ignore
        self.registrar = registrar
    }

    public var watchCount: Int { folders.count }

    /// Watches `folder` and every folder below it. What could not be watched is returned as
    /// a rescan request (the periodic rescan then covers it).
    public mutating func watchTree(_ folder: String = "") -> [FolderChange] {
        var changes: [FolderChange] = []
        var pending = [folder]
        while let current = pending.popLast() {
            let absolute = current.isEmpty ? root : LocalFileSystem.join(root, current)
            switch registrar.addWatch(absolute, mask: .folderChanges) {
            case let .success(watch):
                folders[watch] = current
            case .failure(.watchLimit):
                watchLimitReached = true
                changes.append(.rescan(folder: current, reason: .watchLimit))
                continue
            case .failure(.unavailable):
                continue
            }
            guard let names = try? LocalFileSystem.directoryEntries(absolute) else { continue }
            for name in names {
                let child = current.isEmpty ? name : current + "/" + name
                if ignore.matches(child) { continue }
                if let meta = try? LocalFileSystem.metadata(LocalFileSystem.join(root, child)), meta.kind == .directory {
                    pending.append(child)
                }
            }
        }
        return changes
    }

    /// Stops watching `folder` and everything below it (it was moved away or deleted).
    public mutating func unwatchTree(_ folder: String) {
        for (watch, path) in folders where path == folder || path.hasPrefix(folder + "/") {
            registrar.removeWatch(watch)
            folders[watch] = nil
        }
    }

    /// The changes one batch of events means, in order.
    public mutating func handle(_ events: [InotifyEvent]) -> [FolderChange] {
        var changes: [FolderChange] = []
        for event in events {
            if event.mask.contains(.queueOverflow) {
                changes.append(.rescan(folder: "", reason: .queueOverflow))
                continue
            }
            guard let folder = folders[event.watch] else { continue }
            if event.mask.contains(.ignored) {
                folders[event.watch] = nil
                continue
            }
            if event.name.isEmpty {
                // The watched folder itself was deleted or moved: its parent's event says
                // where it went; the root going away is noticed by the next rescan.
                if folder.isEmpty && event.mask.contains(.moveSelf) || event.mask.contains(.deleteSelf) && folder.isEmpty {
                    changes.append(.rescan(folder: "", reason: .watchLost))
                }
                continue
            }
            let path = folder.isEmpty ? event.name : folder + "/" + event.name
            if ignore.matches(path) { continue }
            if event.mask.contains(.isDirectory) {
                if event.mask.contains(.create) {
                    changes += watchTree(path)
                    changes.append(.rescan(folder: path, reason: .newFolder))
                } else if event.mask.contains(.movedTo) {
                    changes += watchTree(path)
                    changes.append(.rescan(folder: path, reason: .movedFolder))
                } else if event.mask.contains(.movedFrom) || event.mask.contains(.delete) {
                    unwatchTree(path)
                    changes.append(.removed(path))
                }
                continue
            }
            if event.mask.contains(.movedTo) {
                changes.append(.appeared(path))
            } else if event.mask.contains(.create) || event.mask.contains(.modify) {
                // A file is created by opening it for writing: it counts as open until
                // the writer closes it.
                changes.append(.written(path))
            } else if event.mask.contains(.closeWrite) {
                changes.append(.closed(path))
            } else if event.mask.contains(.delete) || event.mask.contains(.movedFrom) {
                changes.append(.removed(path))
            }
        }
        return changes
    }
}
