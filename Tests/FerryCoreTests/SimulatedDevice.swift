import FerryConfig
import FerryCore
import FerryEngine
@testable import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerryTestSupport
import Foundation

/// One device of a simulation: a local folder, a state folder (journal, lock, device id) of
/// its own, and a name, as separate as separate machines; its runs go to the shared remote
/// through the interleaving's gate. What a person does at the device (edit, delete, rename)
/// happens between its runs, on its local folder.
struct SimulatedDevice: Sendable {
    let index: Int
    let name: String
    /// The local folder.
    let folder: String
    let state: String

    /// Makes the device's folders in `root`, with a device id of its own written in advance
    /// (a made one is random, and it names temporary files on the remote) and an empty
    /// journal copied from `emptyJournal`.
    init(index: Int, in root: String) throws {
        self.index = index
        name = String(UnicodeScalar(UInt8(ascii: "a") + UInt8(index)))
        folder = root + "/device-" + name
        state = root + "/state-" + name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Data("sim\(name)device\n".utf8).write(to: URL(fileURLWithPath: state + "/device-id"))
        try Self.emptyJournal.get().write(to: URL(fileURLWithPath: StateFolder.journalPath(in: state)))
    }

    /// A journal with every migration applied and nothing in it, made once per process: a
    /// device's first run would otherwise spend most of its time creating its tables (three
    /// devices a seed, a thousand seeds).
    private static let emptyJournal: Result<Data, any Error> = Result {
        let folder = TemporaryDirectory("ferry-sim-journal")
        let path = StateFolder.journalPath(in: folder.path)
        // Dropped at once: closing its last connection folds the write-ahead log into the file.
        _ = try Journal.open(at: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Retries without waits (so a retry is never raced by another job: it is ready at
    /// once), three attempts per file.
    static let config: Config = {
        var config = Config.defaults
        config.retry = RetryPolicy(attempts: 3, baseDelay: .zero, factor: 2, maxDelay: .zero)
        return config
    }()

    /// One two-way sync of the device's folder with the shared remote through `backend`
    /// (the device's way there), one transfer at a time, its run starting at `start`
    /// (seconds since 1970). The mass-delete guard is off: in a folder of a few files,
    /// deleting half of them is an ordinary edit.
    func sync(through backend: any Backend, policy: ConflictPolicy = .keepBoth, start: Double) async throws(RunError) -> RunSummary {
        // The trash is kept for ever: the checks look into it, and a run spends no call on
        // expiring it.
        let pair = FolderPair(name: "shared", localRoot: folder, backend: backend, remoteRoot: .root, mode: .sync, ignore: [],
                              conflict: .init(fallback: policy),
                              trash: TrashSettings(enabled: true, localPath: TrashSettings.folderName, remotePath: nil, keepSeconds: nil))
        var options = RunOptions()
        options.transfers = 1
        options.hostName = "dev-" + name
        options.forceDeletes = true
        options.clock = InstantClock(wallStart: start)
        return try await PairRun(pair: pair, config: Self.config, state: StateFolder(directory: state), options: options,
                                 sink: DiscardingEventSink(), progress: RunProgress()).run()
    }

    // MARK: What a person does

    func content(of path: String) -> String? {
        FileManager.default.contents(atPath: folder + "/" + path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes the file in place (an edit keeps the file's inode, as an editor saving over
    /// it does), with the given modification time.
    func write(_ content: String, at path: String, modified: Double) throws {
        let full = folder + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        if let handle = FileHandle(forWritingAtPath: full) {
            defer { try? handle.close() }
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(content.utf8))
        } else {
            try Data(content.utf8).write(to: URL(fileURLWithPath: full))
        }
        try TreeGenerator.setModificationTime(full, seconds: modified)
    }

    func delete(_ path: String) throws {
        try FileManager.default.removeItem(atPath: folder + "/" + path)
    }

    /// A rename keeps the file's inode and time: how the next sync recognises it.
    func rename(_ source: String, to target: String) throws {
        let full = folder + "/" + target
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: folder + "/" + source, toPath: full)
    }

    // MARK: What the device holds

    /// The device's files by path, the contents of its trash, and any other file of
    /// Ferry's (a partial download) left in the folder.
    func holdings() throws -> SimulatedTree {
        try SimulatedTree(files: Self.files(below: folder))
    }

    static func files(below root: String) throws -> [String: String] {
        var files: [String: String] = [:]
        guard let walk = FileManager.default.enumerator(atPath: root) else { return files }
        while let path = walk.nextObject() as? String {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue else {
                continue
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
            files[path] = String(decoding: data, as: UTF8.self)
        }
        return files
    }
}

/// A tree as the checks see it, a device's folder or the remote: the files a person sees,
/// what lies in the trash, and Ferry's own files left over (partial transfers, displaced
/// copies) outside the trash and the catalog.
struct SimulatedTree: Sendable, Equatable {
    var files: [String: String] = [:]
    /// The trash's files, by path below the trash folder.
    var trash: [String: String] = [:]
    var leftovers: [String] = []

    /// Sorts `all` (path → content): the trash folder's files, the catalog's and bundles'
    /// folders (Ferry's records, not content), hidden names (Ferry's temporary files: the
    /// simulated devices never write hidden names), and the rest.
    init(files all: [String: String]) {
        for (path, content) in all {
            let first = path.split(separator: "/").first.map(String.init) ?? path
            if first == TrashSettings.folderName {
                trash[String(path.dropFirst(first.count + 1))] = content
            } else if first == RemoteCatalog.folderName || first == BundleNaming.folderName {
                continue
            } else if path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                leftovers.append(path)
            } else {
                files[path] = content
            }
        }
        leftovers.sort()
    }
}
