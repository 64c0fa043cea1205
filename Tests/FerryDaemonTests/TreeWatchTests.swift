import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
import FerryDaemon
@testable import FerryPlanning
import FerrySystem

/// Hands out watch descriptors like the kernel, and can run out of them like a machine at
/// `fs.inotify.max_user_watches`.
final class RecordingRegistrar: WatchRegistrar {
    private struct State {
        var next: Int32 = 1
        var watched: [Int32: String] = [:]
        var limit: Int
    }

    private let state: Mutex<State>

    init(limit: Int = .max) {
        state = Mutex(State(limit: limit))
    }

    func addWatch(_ path: String, mask: InotifyEvent.Mask) -> Result<Int32, InotifyInstance.WatchFailure> {
        state.withLock { state in
            if let existing = state.watched.first(where: { $0.value == path })?.key { return .success(existing) }
            guard state.watched.count < state.limit else { return .failure(.watchLimit) }
            let watch = state.next
            state.next += 1
            state.watched[watch] = path
            return .success(watch)
        }
    }

    func removeWatch(_ watch: Int32) {
        _ = state.withLock { $0.watched.removeValue(forKey: watch) }
    }

    func watch(for path: String) -> Int32? {
        state.withLock { $0.watched.first { $0.value == path }?.key }
    }

    var paths: Set<String> { state.withLock { Set($0.watched.values) } }
}

@Suite("TreeWatch", .integration)
struct TreeWatchTests {
    static func ignore() throws -> GlobSet {
        try GlobSet(ScanSettings.builtInIgnores)
    }

    @Test("the decoder reads what the kernel writes: header, padded name, several events per read")
    func decoderRoundTrip() {
        let events = [
            InotifyEvent(watch: 1, mask: [.create], name: "IMG_0001.jpg"),
            InotifyEvent(watch: 1, mask: [.closeWrite], name: "a"),
            InotifyEvent(watch: 2, mask: [.movedFrom], cookie: 7, name: "ünïcode.mov"),
            InotifyEvent(watch: -1, mask: [.queueOverflow]),
        ]
        let bytes = InotifyEventDecoder.encode(events)
        #expect(bytes.count % 4 == 0)
        #expect(InotifyEventDecoder.decode(bytes) == events)
        // A truncated record is not read past the end.
        #expect(InotifyEventDecoder.decode(Array(bytes.dropLast(3))).count == 3)
    }

    @Test("the whole existing tree is watched, ignored folders are not")
    func watchesExistingTree() throws {
        let directory = TemporaryDirectory("treewatch")
        try FileManager.default.createDirectory(atPath: directory.child("a/b/c"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.child("a/.x.ferry-part"), withIntermediateDirectories: true)
        let registrar = RecordingRegistrar()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        #expect(tree.watchTree().isEmpty)
        #expect(registrar.paths == [directory.path, directory.child("a"), directory.child("a/b"), directory.child("a/b/c")])
    }

    @Test("events become changes with paths from the root; Ferry's temporary files are dropped")
    func eventsBecomeChanges() throws {
        let directory = TemporaryDirectory("treewatch")
        try FileManager.default.createDirectory(atPath: directory.child("day1"), withIntermediateDirectories: true)
        let registrar = RecordingRegistrar()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        _ = tree.watchTree()
        let root = try #require(registrar.watch(for: directory.path))
        let day = try #require(registrar.watch(for: directory.child("day1")))
        let changes = tree.handle(InotifyEventDecoder.decode(InotifyEventDecoder.encode([
            InotifyEvent(watch: day, mask: [.create], name: "a.jpg"),
            InotifyEvent(watch: day, mask: [.modify], name: "a.jpg"),
            InotifyEvent(watch: day, mask: [.closeWrite], name: "a.jpg"),
            InotifyEvent(watch: root, mask: [.create], name: ".b.jpg.ferry-part"),
            InotifyEvent(watch: root, mask: [.movedTo], name: "b.jpg"),
            InotifyEvent(watch: day, mask: [.delete], name: "old.jpg"),
            InotifyEvent(watch: 99, mask: [.create], name: "unknown-watch.jpg"),
        ])))
        #expect(changes == [
            .written("day1/a.jpg"), .written("day1/a.jpg"), .closed("day1/a.jpg"),
            .appeared("b.jpg"), .removed("day1/old.jpg"),
        ])
    }

    @Test("a new subfolder is watched at once and its content (landed before the watch) is scanned")
    func newFolder() throws {
        let directory = TemporaryDirectory("treewatch")
        let registrar = RecordingRegistrar()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        _ = tree.watchTree()
        let root = try #require(registrar.watch(for: directory.path))
        // mkdir -p new/deeper, and a file in it, all before the event is read.
        try FileManager.default.createDirectory(atPath: directory.child("new/deeper"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory.child("new/deeper/early.jpg"), contents: Data([1]))
        let changes = tree.handle([InotifyEvent(watch: root, mask: [.create, .isDirectory], name: "new")])
        #expect(changes == [.rescan(folder: "new", reason: .newFolder)])
        #expect(registrar.paths.contains(directory.child("new/deeper")))
    }

    @Test("a renamed folder is watched under its new name; the old name's watches are dropped")
    func renamedFolder() throws {
        let directory = TemporaryDirectory("treewatch")
        try FileManager.default.createDirectory(atPath: directory.child("old/sub"), withIntermediateDirectories: true)
        let registrar = RecordingRegistrar()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        _ = tree.watchTree()
        let root = try #require(registrar.watch(for: directory.path))
        try FileManager.default.moveItem(atPath: directory.child("old"), toPath: directory.child("renamed"))
        let changes = tree.handle([
            InotifyEvent(watch: root, mask: [.movedFrom, .isDirectory], cookie: 5, name: "old"),
            InotifyEvent(watch: root, mask: [.movedTo, .isDirectory], cookie: 5, name: "renamed"),
        ])
        #expect(changes == [.removed("old"), .rescan(folder: "renamed", reason: .movedFolder)])
        #expect(registrar.paths == [directory.path, directory.child("renamed"), directory.child("renamed/sub")])
    }

    @Test("a kernel queue overflow becomes a rescan of the whole folder, and the rescan finds every file")
    func overflowRescans() async throws {
        let directory = TemporaryDirectory("treewatch")
        let registrar = RecordingRegistrar()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        var tracker = SettleTracker(quietPeriod: 1)
        _ = tree.watchTree()
        let root = try #require(registrar.watch(for: directory.path))
        // 50 files land, but the kernel reports only the first and then the overflow.
        for index in 0..<50 { _ = FileManager.default.createFile(atPath: directory.child("f\(index).jpg"), contents: Data([1])) }
        for change in tree.handle([
            InotifyEvent(watch: root, mask: [.create], name: "f0.jpg"),
            InotifyEvent(watch: -1, mask: [.queueOverflow]),
        ]) {
            switch change {
            case let .written(path): tracker.changed(path, written: true, at: 0)
            case let .rescan(folder, reason):
                #expect(folder == "" && reason == .queueOverflow)
                tracker.rescan(folder: folder, at: 0)
            default: Issue.record("unexpected \(change)")
            }
        }
        let batch = tracker.takeSettled(at: 60)
        #expect(batch.folders == [""])
        // What a rescan of the root sees: every file, including the 49 the events missed.
        let scan = try await LocalScanner(root: directory.path, ignore: try Self.ignore(), followSymlinks: false).scan()
        #expect(scan.entries.count == 50)
    }

    @Test("at the watch limit the unwatched folders are reported for rescan instead of failing")
    func watchLimit() throws {
        let directory = TemporaryDirectory("treewatch")
        for name in ["a", "b", "c"] {
            try FileManager.default.createDirectory(atPath: directory.child(name), withIntermediateDirectories: true)
        }
        let registrar = RecordingRegistrar(limit: 2)
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: registrar)
        let changes = tree.watchTree()
        #expect(tree.watchLimitReached)
        #expect(changes.count == 2)
        #expect(changes.allSatisfy { if case .rescan(_, .watchLimit) = $0 { true } else { false } })
    }

    @Test("the real inotify instance reports a file written and closed in a watched folder")
    func realInotify() async throws {
        let directory = TemporaryDirectory("treewatch")
        let inotify = try InotifyInstance()
        var tree = TreeWatch(root: directory.path, ignore: try Self.ignore(), registrar: inotify)
        _ = tree.watchTree()
        let events = inotify.events()
        // A safety net: the stream ends if the events never come.
        let deadline = Task {
            try await Task.sleep(for: .seconds(20))
            inotify.stop()
        }
        defer { deadline.cancel() }
        // Written in place (Foundation's createFile writes a temporary file and renames it).
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory.child("x.jpg")))
        var changes: [FolderChange] = []
        for await batch in events {
            changes += tree.handle(batch)
            if changes.contains(.closed("x.jpg")) { break }
        }
        inotify.stop()
        #expect(changes.first == .written("x.jpg"))
        #expect(changes.last == .closed("x.jpg"))
    }

    /// A daemon stopped at once (Ctrl-C right after it started) stopped its watcher before the
    /// watcher asked for events. The instance was closed by the stop and again by the reader
    /// thread started after it; the second close took the number the journal's WAL had been
    /// given meanwhile, and the next write to the journal failed ("disk I/O error").
    @Test("a stop before the events are asked for closes the instance once, never a file opened after it")
    func stopBeforeEventsClosesOnce() async throws {
        let directory = TemporaryDirectory("treewatch-stop")
        let inotify = try InotifyInstance()
        _ = inotify.addWatch(directory.path, mask: .folderChanges)
        inotify.stop()
        // The lowest free number, most likely the one the instance had.
        let probe = try FileHandle(forReadingFrom: URL(fileURLWithPath: directory.path))
        for await _ in inotify.events() {}
        #expect(fcntl(probe.fileDescriptor, F_GETFD) != -1, "a file opened after the stop was closed")
        // A watch asked for after the stop is refused, not added to whatever has the number now.
        #expect(inotify.addWatch(directory.path, mask: .folderChanges) == .failure(.unavailable(String(cString: strerror(EBADF)))))
        try probe.close()
    }
}
