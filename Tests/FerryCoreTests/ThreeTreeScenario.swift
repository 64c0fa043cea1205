import FerryPluginAPI
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// One generated case of the three-tree planner test: for a few paths, what the journal
/// says both sides were at the last sync (or that they were never synced), and what each
/// side holds now. Built from small integers, so that the property checker can shrink a
/// failing case towards 0 (synced, unchanged, the first path, keep-both) by itself.
///
/// A file's content is an abstract number (`content`): what "no version lost" counts. Its
/// size and time come from the content, so that different contents look different, except
/// where a case asks for two contents with the same size and time (a look-alike).
struct ThreeTreeScenario: Sendable, Equatable {
    /// One path's story. Each field is an integer whose 0 is the simplest case.
    struct File: Sendable, Equatable {
        /// Index into `ThreeTreeScenario.paths`.
        var path: Int
        /// 0…6: synced at the last run; 7…9: never synced.
        var base: Int
        /// Synced: 0…3 unchanged, 4…6 changed, 7…9 deleted. Never synced: 0…5 created, 6…9 absent.
        var local: Int
        var remote: Int
        /// When both sides hold a new content: 0…4 different contents; 5…6 the same content
        /// with the same size and time (equal bytes); 7 the same content at different
        /// times; 8…9 different contents with the same size and time (a look-alike).
        var relation: Int
        /// Which new content is later: 0 the local one, 1 the remote one, 2 both within the
        /// same second (the local one 0.25 s in, the remote one 0.5 s in).
        var times: Int
        /// The journal row of a synced path as an earlier run left it: 0…6 in sync; 7 in
        /// conflict (an `ask` not yet answered); 8 a job still waiting (an upload, or a
        /// download); 9 failed for good.
        var row: Int = 0
    }

    var files: [File]
    var policy: ConflictPolicy
    var remoteKind: ThreeTreeRemoteKind
    /// 0: no local rename; k: the local file at `paths[k - 1]` is renamed to `paths[renameTo]`
    /// (when that name is free locally), keeping its inode, size and time.
    var renameFrom: Int
    var renameTo: Int
    /// Under `ask`: how the person answers each conflict afterwards (`ferry resolve`).
    var answers: Int
    /// Seeds the shuffled orders in which the jobs of one plan are carried out.
    var orderSeed: UInt64
    /// For the interrupted run: how many jobs are carried out before it stops, and how many
    /// of the last ones' results never reached the journal (committed in groups, lost in a crash).
    var interruptAfter = 0
    var unbooked = 0

    /// Nested folders, a name without an extension and names with a leading dot (the conflict
    /// copy's name treats those specially). No path is a folder of another.
    static let paths = ["a.jpg", "b.txt", "DCIM/c.jpg", "DCIM/d.jpg", "DCIM/2024/e.heic", "DCIM/2024/f",
                        ".thumbnails/c.jpg", "notes/.g"]

    /// The spec in a form that can be pasted back as a regression test.
    var literal: String {
        let list = files.map { "(\($0.path), \($0.base), \($0.local), \($0.remote), \($0.relation), \($0.times), \($0.row))" }
        return "ThreeTreeScenario(spec: [\(list.joined(separator: ", "))], policy: .\(policy), remote: .\(remoteKind), "
            + "rename: (\(renameFrom), \(renameTo)), answers: \(answers), orderSeed: \(orderSeed), "
            + "interrupt: (\(interruptAfter), \(unbooked)))"
    }

    init(files: [File], policy: ConflictPolicy, remoteKind: ThreeTreeRemoteKind, renameFrom: Int, renameTo: Int,
         answers: Int, orderSeed: UInt64, interruptAfter: Int = 0, unbooked: Int = 0) {
        self.files = files
        self.policy = policy
        self.remoteKind = remoteKind
        self.renameFrom = renameFrom
        self.renameTo = renameTo
        self.answers = answers
        self.orderSeed = orderSeed
        self.interruptAfter = interruptAfter
        self.unbooked = unbooked
    }

    /// The form `literal` prints.
    init(spec: [(Int, Int, Int, Int, Int, Int, Int)], policy: ConflictPolicy, remote: ThreeTreeRemoteKind,
         rename: (Int, Int) = (0, 0), answers: Int = 0, orderSeed: UInt64 = 0, interrupt: (Int, Int) = (0, 0)) {
        self.init(files: spec.map { File(path: $0.0, base: $0.1, local: $0.2, remote: $0.3, relation: $0.4, times: $0.5, row: $0.6) },
                  policy: policy, remoteKind: remote, renameFrom: rename.0, renameTo: rename.1, answers: answers,
                  orderSeed: orderSeed, interruptAfter: interrupt.0, unbooked: interrupt.1)
    }
}

/// How the model's remote keeps a file's version, as the backends do.
enum ThreeTreeRemoteKind: Int, CaseIterable, Sendable {
    /// A local disk: nanosecond times, no ETag.
    case nanos
    /// WebDAV: whole-second times and a new ETag for every write.
    case secondsETag
    /// A store that keeps no times, only an ETag that is the content's hash (S3's MD5).
    case etagOnly
    /// S3: the listing's time is the upload's (`Last-Modified`, to the millisecond), and a
    /// `HEAD` or `GET` tells the time the writer stored (`x-amz-meta-mtime`), which a
    /// download gives the local copy; the ETag is the content's MD5.
    case s3

    static let second: Int64 = 1_000_000_000

    /// The file a write of `content` (the remote's `write`th) with the local time `time`
    /// leaves on the remote.
    func file(content: Int, size: Int64, time: Int64, write: Int) -> ThreeTreeRemoteFile {
        guard self == .s3 else {
            return ThreeTreeRemoteFile(content: content, version: version(content: content, size: size, time: time, write: write))
        }
        let uploaded = ThreeTreeScenario.t0 + (2_000_000 + Int64(write)) * Self.second + 123_000_000
        return ThreeTreeRemoteFile(content: content, version: RemoteVersion(size: size, modifiedNanos: uploaded, etag: "\"c\(content)\""),
                                   storedTime: time)
    }

    /// What a listing shows of `content` written (the `write`th write) with the local time `time`.
    func version(content: Int, size: Int64, time: Int64, write: Int) -> RemoteVersion {
        switch self {
        case .nanos: RemoteVersion(size: size, modifiedNanos: time, etag: nil)
        case .secondsETag: RemoteVersion(size: size, modifiedNanos: time / Self.second * Self.second, etag: "\"w\(write)\"")
        case .etagOnly, .s3: RemoteVersion(size: size, modifiedNanos: nil, etag: "\"c\(content)\"")
        }
    }
}

/// What happened to one side of a path before the run, as the scenario made it.
enum ThreeTreeSide: String, Sendable {
    case unchanged, changed, deleted, created, absent

    init(_ value: Int, synced: Bool) {
        if synced {
            self = value <= 3 ? .unchanged : value <= 6 ? .changed : .deleted
        } else {
            self = value <= 5 ? .created : .absent
        }
    }

    var isNew: Bool { self == .changed || self == .created }
}

extension ThreeTreeScenario {
    static let t0: Int64 = 1_700_000_000_000_000_000
    static let second: Int64 = 1_000_000_000

    /// The paths the scenario uses, each once (a later spec for the same path is dropped).
    var distinctFiles: [File] {
        var seen: Set<Int> = []
        return files.filter { seen.insert($0.path % Self.paths.count).inserted }
    }

    /// The trees and journal before the run.
    func initialWorld(classifier: QueueClassifier) -> ThreeTreeWorld {
        var world = ThreeTreeWorld(remoteKind: remoteKind)
        var nextContent = 1
        var sizes: [Int: Int64] = [:]
        func newContent(size: Int64? = nil) -> Int {
            defer { nextContent += 1 }
            sizes[nextContent] = size ?? 1000 + Int64(nextContent) * 10
            return nextContent
        }
        for file in distinctFiles {
            let index = file.path % Self.paths.count
            let path = Self.paths[index]
            let synced = file.base <= 6
            let localSide = ThreeTreeSide(file.local, synced: synced)
            let remoteSide = ThreeTreeSide(file.remote, synced: synced)
            let baseTime = Self.t0 + Int64(index * 100 + 1) * Self.second + 111_000_000
            let newTime = Self.t0 + Int64(index * 100 + 50) * Self.second
            var localTime = newTime + 250_000_000
            var remoteTime = newTime + 500_000_000
            switch file.times % 3 {
            case 0: localTime += 3 * Self.second
            case 1: remoteTime += 3 * Self.second
            default: break
            }

            var inode: Int64 = 0
            if synced {
                let base = newContent()
                inode = world.newInode()
                let local = LocalVersion(size: sizes[base]!, modifiedNanos: baseTime, inode: inode)
                let written = remoteKind.file(content: base, size: sizes[base]!, time: baseTime, write: world.newWrite())
                var record = FileRecord(pairId: 1, path: path, queue: classifier.queue(forPath: path, size: local.size),
                                        status: .inSync, updatedAt: 1000)
                record.markInSync(local: local, remote: written.statVersion, at: 1000)
                switch file.row % 10 {
                case 7:
                    record.markConflict(reason: "changed on both sides since the last sync; run ferry resolve \(path) --keep local|remote|both")
                case 8:
                    record.plan(index % 2 == 0 ? .upload : .download)
                case 9:
                    record.plan(.upload)
                    record.failForGood(failures: 5, error: "the server said no", at: 1000)
                default:
                    break
                }
                world.journal[path] = record
                world.base[path] = base
                if localSide == .unchanged { world.local[path] = ThreeTreeLocalFile(content: base, version: local) }
                if remoteSide == .unchanged { world.remote[path] = written }
            }
            var localContent: Int?
            if localSide.isNew {
                let content = newContent()
                localContent = content
                let version = LocalVersion(size: sizes[content]!, modifiedNanos: localTime,
                                           inode: localSide == .changed ? inode : world.newInode())
                world.local[path] = ThreeTreeLocalFile(content: content, version: version)
            }
            if remoteSide.isNew {
                var content: Int
                var time = remoteTime
                let relation = localContent == nil ? 0 : file.relation % 10
                switch relation {
                case 5, 6:
                    content = localContent!
                    time = localTime
                case 7:
                    content = localContent!
                case 8, 9:
                    content = newContent(size: sizes[localContent!]!)
                    time = localTime
                default:
                    content = newContent()
                }
                world.remote[path] = remoteKind.file(content: content, size: sizes[content]!, time: time, write: world.newWrite())
            }
        }
        if renameFrom > 0 {
            let from = Self.paths[(renameFrom - 1) % Self.paths.count]
            let to = Self.paths[renameTo % Self.paths.count]
            if from != to, let moved = world.local[from], world.local[to] == nil {
                world.local[to] = moved
                world.local[from] = nil
                world.renamed = (from, to, moved)
            }
        }
        return world
    }

    /// The conflict policy for the answer to the conflict at `path` (under `ask`).
    func answer(for path: String) -> ConflictPolicy {
        let choices: [ConflictPolicy] = [.keepBoth, .local, .remote]
        let index = Self.paths.firstIndex(of: path) ?? 0
        return choices[(answers + index) % choices.count]
    }
}

extension ThreeTreeScenario: CustomTestStringConvertible {
    var testDescription: String { literal }

    /// The trees the scenario makes, a line per path.
    var treeDescription: String {
        let world = initialWorld(classifier: PlannerTests.classifier)
        var lines: [String] = []
        for path in Set(world.local.keys).union(world.remote.keys).union(world.journal.keys).sorted() {
            let local = world.local[path].map { "#\($0.content) \($0.describedVersion)" } ?? "-"
            let remote = world.remote[path].map { "#\($0.content) \($0.describedVersion)" } ?? "-"
            let row = world.journal[path].map { " (row \($0.status))" } ?? ""
            lines.append("\(path): journal \(world.base[path].map { "#\($0)" } ?? "-")\(row), local \(local), remote \(remote)")
        }
        if let renamed = world.renamed { lines.append("renamed locally: \(renamed.from) -> \(renamed.to)") }
        return lines.joined(separator: "\n")
    }
}
