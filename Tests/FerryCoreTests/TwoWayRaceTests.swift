import FerryConfig
import FerryCore
import FerryEngine
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The shared in-memory remote with another device's moves scripted in: before a given
/// MOVE or upload reaches it, another device writes a version; a given MOVE fails once
/// before it reaches it.
final class ScriptedMoves: WrapsBackend {
    let inner = InMemoryBackend()
    private let rules = Mutex<[Rule]>([])
    private let uploadWrites = Mutex<[String: String]>([:])

    struct Rule: Sendable {
        /// Which MOVE: the start of its source and of its target.
        var sourcePrefix: String
        var targetPrefix: String
        /// Another device's version written under `source` just before the MOVE.
        var writeFirst: String?
        /// The MOVE fails before it reaches the remote, as with no connection.
        var fail = false
    }

    func script(_ rule: Rule) {
        rules.withLock { $0.append(rule) }
    }

    /// Another device writes `content` under `path` just before this device's next upload
    /// of it.
    func write(_ content: String, beforeUploadOf path: String) {
        uploadWrites.withLock { $0[path] = content }
    }

    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        if let content = uploadWrites.withLock({ $0.removeValue(forKey: request.destination.string) }) {
            inner.put(request.destination.string, Data(content.utf8), modifiedNanos: 1_767_400_000_000_000_000)
        }
        return try await inner.upload(request, observer: observer)
    }

    func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let rule = rules.withLock { rules -> Rule? in
            guard let index = rules.firstIndex(where: {
                source.string.hasPrefix($0.sourcePrefix) && destination.string.hasPrefix($0.targetPrefix)
            })
            else { return nil }
            return rules.remove(at: index)
        }
        if let content = rule?.writeFirst {
            inner.put(source.string, Data(content.utf8), modifiedNanos: 1_767_300_000_000_000_000)
        }
        if rule?.fail == true {
            throw BackendError(.unreachable, "connection refused (scripted)", path: source.string)
        }
        try await inner.move(from: source, to: destination, overwrite: overwrite)
    }

    func remote(_ path: String) -> String? {
        inner.files[path].map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// Every version on the remote outside its trash and Ferry's records, by content.
    var versions: Set<String> {
        Set(inner.files.filter { !$0.key.hasPrefix(TrashSettings.folderName + "/") && !$0.key.hasPrefix(RemoteCatalog.folderName + "/") }
            .values.map { String(decoding: $0.data, as: UTF8.self) })
    }
}

/// Races between two devices that the several-devices simulation found, each pinned down
/// with a scripted remote so that it happens the same way on every run, whatever the
/// simulation's seeds draw.
@Suite("two-way sync: another device's write between this device's listing and its MOVE")
struct TwoWayRaceTests {
    static let t0 = 1_767_225_600.0

    /// Found by the simulation: device A renamed `f` to `g`; device C wrote `f` after A's
    /// listing. A's MOVE took C's version to `g` and recorded it as A's own file: C's
    /// version sat under A's new name on every other device, A's stayed on A alone.
    @Test("a local rename whose old name another device wrote after the listing: that version stays under the old name")
    func renameOverAnotherWrite() async throws {
        let work = TemporaryDirectory("ferry-race")
        let remote = ScriptedMoves()
        let device = try SimulatedDevice(index: 0, in: work.path)
        try device.write("the first version\n", at: "d/f.txt", modified: Self.t0)
        _ = try await device.sync(through: remote, start: Self.t0 + 1000)
        try device.rename("d/f.txt", to: "d/g.txt")
        remote.script(.init(sourcePrefix: "d/f.txt", targetPrefix: "d/g.txt", writeFirst: "written by another device\n"))

        let raced = try await device.sync(through: remote, start: Self.t0 + 2000)
        #expect(raced.changedDuringRun == 1, "the rename is decided again")
        #expect(remote.remote("d/f.txt") == "written by another device\n")
        #expect(device.content(of: "d/f.txt") == "written by another device\n", "the old name is downloaded")
        #expect(device.content(of: "d/g.txt") == "the first version\n")

        _ = try await device.sync(through: remote, start: Self.t0 + 3000)
        #expect(remote.remote("d/g.txt") == "the first version\n", "the renamed file is uploaded by the next sync")
        #expect(remote.remote("d/f.txt") == "written by another device\n")
    }

    /// Found by the simulation: device B's upload moved A's version (written after B's
    /// listing) into B's trash, found it was not the version it planned to replace, and
    /// failed to put it back (no connection). Retried, the upload found the name free and
    /// took that for a deletion: B's version went up, A's stayed in B's trash alone.
    @Test("another device's version moved aside whose put-back failed: the retry puts it back and both versions are kept")
    func failedPutBack() async throws {
        let work = TemporaryDirectory("ferry-race")
        let remote = ScriptedMoves()
        let device = try SimulatedDevice(index: 1, in: work.path)
        try device.write("the first version\n", at: "f.txt", modified: Self.t0)
        _ = try await device.sync(through: remote, start: Self.t0 + 1000)
        try device.write("written by this device\n", at: "f.txt", modified: Self.t0 + 10)
        let trash = TrashSettings.folderName + "/"
        remote.script(.init(sourcePrefix: "f.txt", targetPrefix: trash, writeFirst: "written by another device\n"))
        remote.script(.init(sourcePrefix: trash, targetPrefix: "f.txt", fail: true))

        _ = try await device.sync(through: remote, start: Self.t0 + 2000)
        _ = try await device.sync(through: remote, start: Self.t0 + 3000)
        #expect(remote.versions == ["written by this device\n", "written by another device\n"])
        let local = try device.holdings().files
        #expect(Set(local.values) == remote.versions, "\(local)")
    }

    /// Found by the simulation: a file created on two devices, kept both ways (the remote
    /// copy renamed to the conflict name), whose winner's upload then found the name taken
    /// by a third device. Decided again, the file was kept both ways once more, and the
    /// local loser took the same conflict name as the remote one: two versions under one
    /// name, a failed download ("the local file changed") and a conflict copy of the
    /// conflict copy on the next sync.
    @Test("a file kept both ways twice in one run: the second loser gets a conflict name of its own")
    func keptBothTwice() async throws {
        let work = TemporaryDirectory("ferry-race")
        let remote = ScriptedMoves()
        let device = try SimulatedDevice(index: 2, in: work.path)
        remote.inner.put("a.txt", Data("written by device b\n".utf8), modifiedNanos: 1_767_225_600_000_000_000)
        try device.write("written by device c\n", at: "a.txt", modified: Self.t0 + 100)
        remote.write("written by device a\n", beforeUploadOf: "a.txt")

        let raced = try await device.sync(through: remote, start: Self.t0 + 2000)
        #expect(raced.failedFiles == 0, "\(raced.failures)")
        _ = try await device.sync(through: remote, start: Self.t0 + 3000)
        let all: Set<String> = ["written by device a\n", "written by device b\n", "written by device c\n"]
        #expect(remote.versions == all)
        let local = try device.holdings().files
        #expect(Set(local.values) == all && local.count == 3, "\(local)")
    }
}
