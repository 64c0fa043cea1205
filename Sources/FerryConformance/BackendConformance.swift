import FerryPluginAPI
import FerrySystem
import Foundation

/// The checks every backend must pass, whatever it talks to. Each check gets a backend
/// whose root is an empty folder and a local scratch folder for source and partial files.
/// Later backends (WebDAV, HTTP, external plugins) run the same list.
public enum BackendConformance {
    public struct Check: Sendable, CustomStringConvertible {
        public var name: String
        public var run: @Sendable (any Backend, String) async throws -> Void
        public var description: String { name }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The check does not apply to this backend (it does not claim the capability the
    /// check is about): reported as skipped, never as passed.
    public struct NotApplicable: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Failure(message: message()) }
    }

    static func path(_ text: String) throws -> RelativePath { try RelativePath(text) }

    /// Writes a local source file and returns an upload request for it.
    static func source(_ scratch: String, size: Int, seed: UInt64, to destination: String,
                       modified: Double = 1_650_000_000.25) throws -> (UploadRequest, [UInt8]) {
        let local = scratch + "/src-" + String(seed)
        try SampleFile.write(at: local, size: size, seed: seed, modified: modified)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: local)))
        let nanos = try LocalFileSystem.metadata(local)?.modifiedNanos ?? 0
        return (UploadRequest(source: local, destination: try path(destination), size: Int64(size),
                              modifiedNanos: nanos, mayResume: false), bytes)
    }

    static func fetch(_ backend: any Backend, _ remote: String, scratch: String) async throws -> [UInt8] {
        guard let entry = try await backend.stat(try path(remote)) else {
            throw Failure(message: "stat(\(remote)) found nothing after upload")
        }
        let partial = scratch + "/partial-\(UUID().uuidString)"
        // The core creates the partial file; a backend only opens it (DownloadRequest).
        try Data().write(to: URL(fileURLWithPath: partial))
        _ = try await backend.download(DownloadRequest(source: entry.path, partialFile: partial, offset: 0, expected: entry),
                                       observer: NullTransferObserver())
        defer { try? FileManager.default.removeItem(atPath: partial) }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: partial)))
    }

    public static let checks: [Check] = [
        Check(name: "an empty root lists nothing") { backend, _ in
            let entries = try await backend.list(.root)
            try require(entries.isEmpty, "expected no entries, got \(entries.map(\.path.string))")
        },
        Check(name: "a missing file stats as nil, a missing folder lists as notFound") { backend, _ in
            try require(try await backend.stat(path("nothing/here.jpg")) == nil, "stat of a missing file was not nil")
            do {
                _ = try await backend.list(path("no-such-folder"))
                throw Failure(message: "listing a missing folder did not throw")
            } catch let error as BackendError {
                try require(error.code == .notFound, "expected notFound, got \(error.code)")
            }
        },
        Check(name: "upload creates parents; stat and list see the file, never a temporary name") { backend, scratch in
            let (request, _) = try source(scratch, size: 1000, seed: 1, to: "dir/sub/file.bin")
            let result = try await backend.upload(request, observer: NullTransferObserver())
            try require(result.entry.size == 1000, "upload reported size \(result.entry.size)")
            let entry = try await backend.stat(path("dir/sub/file.bin"))
            try require(entry?.size == 1000 && entry?.kind == .file, "stat after upload: \(String(describing: entry))")
            let sub = try await backend.list(path("dir/sub"))
            try require(sub.map(\.path.string) == ["dir/sub/file.bin"], "list(dir/sub) = \(sub.map(\.path.string))")
            let dir = try await backend.list(path("dir"))
            try require(dir.count == 1 && dir[0].kind == .directory && dir[0].path.string == "dir/sub",
                        "list(dir) = \(dir.map(\.path.string))")
        },
        Check(name: "upload keeps the modification time when the backend says it can") { backend, scratch in
            guard try await backend.discoverCapabilities().preservesModificationTime else {
                throw NotApplicable(reason: "the backend does not claim to keep modification times")
            }
            let (request, _) = try source(scratch, size: 10, seed: 2, to: "m.jpg")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            let entry = try await backend.stat(path("m.jpg"))
            let remote = entry?.modifiedNanos ?? -1
            try require(remote == request.modifiedNanos || remote == request.modifiedNanos / 1_000_000_000 * 1_000_000_000,
                        "mtime \(remote) vs source \(request.modifiedNanos)")
        },
        Check(name: "download returns the uploaded bytes") { backend, scratch in
            let (request, bytes) = try source(scratch, size: 300_000, seed: 3, to: "round/trip.mp4")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            try require(try await fetch(backend, "round/trip.mp4", scratch: scratch) == bytes, "downloaded bytes differ")
        },
        Check(name: "an empty file round-trips") { backend, scratch in
            let (request, _) = try source(scratch, size: 0, seed: 4, to: "empty.txt")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            try require(try await backend.stat(path("empty.txt"))?.size == 0, "empty file has a size")
            try require(try await fetch(backend, "empty.txt", scratch: scratch).isEmpty, "empty file downloaded bytes")
        },
        Check(name: "a 64 MiB file round-trips") { backend, scratch in
            let (request, bytes) = try source(scratch, size: 64 << 20, seed: 5, to: "big/video.mov")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            try require(try await fetch(backend, "big/video.mov", scratch: scratch) == bytes, "64 MiB file differs")
        },
        Check(name: "names with spaces, unicode, %, #, ?, +, & and quotes round-trip") { backend, scratch in
            let names = ["with space.jpg", "été 日本.jpg", "100% done.gpx", "#hash.jpg", "what?.jpg", "a+b&c.jpg", "it's \"quoted\".jpg"]
            for (index, name) in names.enumerated() {
                let (request, bytes) = try source(scratch, size: 100 + index, seed: 10 + UInt64(index), to: "odd names/" + name)
                _ = try await backend.upload(request, observer: NullTransferObserver())
                try require(try await fetch(backend, "odd names/" + name, scratch: scratch) == bytes, "'\(name)' differs")
            }
            let listed = Set(try await backend.list(path("odd names")).map(\.path.name))
            try require(listed == Set(names), "listing has \(listed.sorted())")
        },
        Check(name: "an upload over an existing file replaces it") { backend, scratch in
            let (first, _) = try source(scratch, size: 5000, seed: 20, to: "same.jpg")
            _ = try await backend.upload(first, observer: NullTransferObserver())
            let (second, bytes) = try source(scratch, size: 3000, seed: 21, to: "same.jpg")
            _ = try await backend.upload(second, observer: NullTransferObserver())
            try require(try await fetch(backend, "same.jpg", scratch: scratch) == bytes, "second version did not replace the first")
        },
        Check(name: "an upload whose source no longer matches the request is refused") { backend, scratch in
            var (request, _) = try source(scratch, size: 2000, seed: 22, to: "changed.jpg")
            request.size = 1999
            do {
                _ = try await backend.upload(request, observer: NullTransferObserver())
                throw Failure(message: "upload of a changed source succeeded")
            } catch let error as BackendError {
                try require(error.code == .changedDuringTransfer, "expected changedDuringTransfer, got \(error.code)")
            }
            try require(try await backend.stat(path("changed.jpg")) == nil, "a refused upload left a file under the final name")
        },
        Check(name: "a ranged download continues a partial file") { backend, scratch in
            guard backend.capabilities.rangedDownload else {
                throw NotApplicable(reason: "the backend does not claim ranged downloads")
            }
            let (request, bytes) = try source(scratch, size: 200_000, seed: 23, to: "ranged.bin")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            // Servers treat the validators of a file changed within the last second as weak
            // (RFC 7232, 2.2.2) and answer a conditional range with the whole file.
            try await Task.sleep(for: .milliseconds(1100))
            guard let entry = try await backend.stat(path("ranged.bin")) else { throw Failure(message: "no entry") }
            let partial = scratch + "/ranged.partial"
            try Data(bytes.prefix(70_000)).write(to: URL(fileURLWithPath: partial))
            let result = try await backend.download(
                DownloadRequest(source: entry.path, partialFile: partial, offset: 70_000, expected: entry),
                observer: NullTransferObserver())
            try require(result.resumedFrom == 70_000 && result.bytesReceived == 130_000,
                        "resumed from \(result.resumedFrom), received \(result.bytesReceived)")
            try require([UInt8](try Data(contentsOf: URL(fileURLWithPath: partial))) == bytes, "resumed download differs")
        },
        Check(name: "a ranged read gives exactly the bytes asked for, and only of the listed version") { backend, scratch in
            guard backend.capabilities.rangedRead else {
                throw NotApplicable(reason: "the backend does not claim ranged reads")
            }
            let (request, bytes) = try source(scratch, size: 200_000, seed: 30, to: "window.bin")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            // As above: a validator younger than a second is weak to the server.
            try await Task.sleep(for: .milliseconds(1100))
            guard let entry = try await backend.stat(path("window.bin")) else { throw Failure(message: "no entry") }
            let middle = try await backend.read(entry.path, range: 65_000..<131_000, expected: entry, observer: NullTransferObserver())
            try require([UInt8](middle) == Array(bytes[65_000..<131_000]), "a ranged read gave other bytes (\(middle.count))")
            let tail = try await backend.read(entry.path, range: 199_990..<200_000, expected: entry, observer: NullTransferObserver())
            try require([UInt8](tail) == Array(bytes[199_990..<200_000]), "the last bytes differ")
            var other = entry
            other.size = 199_999
            do {
                let read = try await backend.read(entry.path, range: 0..<100, expected: other, observer: NullTransferObserver())
                throw Failure(message: "a read for a version of another size gave \(read.count) bytes")
            } catch let error as BackendError {
                try require(error.code == .changedDuringTransfer && error.isRetryable,
                            "expected a retryable changedDuringTransfer, got \(error.code)")
            }
        },
        Check(name: "a download whose partial file is already complete finishes (no unsatisfiable range)") { backend, scratch in
            guard backend.capabilities.rangedDownload else {
                throw NotApplicable(reason: "the backend does not claim ranged downloads")
            }
            let (request, bytes) = try source(scratch, size: 50_000, seed: 29, to: "complete.bin")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            guard let entry = try await backend.stat(path("complete.bin")) else { throw Failure(message: "no entry") }
            let partial = scratch + "/complete.partial"
            try Data(bytes).write(to: URL(fileURLWithPath: partial))
            _ = try await backend.download(
                DownloadRequest(source: entry.path, partialFile: partial, offset: Int64(bytes.count), expected: entry),
                observer: NullTransferObserver())
            try require([UInt8](try Data(contentsOf: URL(fileURLWithPath: partial))) == bytes,
                        "a download resumed at the end left different bytes")
        },
        Check(name: "a download restarts when the remote file is not the expected version") { backend, scratch in
            let (request, bytes) = try source(scratch, size: 50_000, seed: 24, to: "stale.bin")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            guard var entry = try await backend.stat(path("stale.bin")) else { throw Failure(message: "no entry") }
            let partial = scratch + "/stale.partial"
            try Data(repeating: 0xEE, count: 10_000).write(to: URL(fileURLWithPath: partial))
            entry.size = 60_000
            entry.etag = entry.etag.map { $0 + "-old" }
            let result = try await backend.download(
                DownloadRequest(source: entry.path, partialFile: partial, offset: 10_000, expected: entry),
                observer: NullTransferObserver())
            try require(result.resumedFrom == 0, "resumed a stale partial file at \(result.resumedFrom)")
            try require([UInt8](try Data(contentsOf: URL(fileURLWithPath: partial))) == bytes, "restarted download differs")
        },
        Check(name: "move refuses to overwrite unless asked, and renames; without server-side move it says so") { backend, scratch in
            let (a, bytesA) = try source(scratch, size: 111, seed: 25, to: "move/a.jpg")
            let (b, _) = try source(scratch, size: 222, seed: 26, to: "move/b.jpg")
            _ = try await backend.upload(a, observer: NullTransferObserver())
            _ = try await backend.upload(b, observer: NullTransferObserver())
            // Read after the uploads: a backend may learn what its server can do from them.
            guard backend.capabilities.serverSideMove else {
                do {
                    try await backend.move(from: path("move/a.jpg"), to: path("move/c.jpg"), overwrite: false)
                    throw Failure(message: "move succeeded on a backend that claims no server-side move")
                } catch let error as BackendError {
                    try require(error.code == .unsupported, "expected unsupported, got \(error.code)")
                }
                try require(try await backend.stat(path("move/a.jpg"))?.size == 111, "a refused move lost its source")
                return
            }
            do {
                try await backend.move(from: path("move/a.jpg"), to: path("move/b.jpg"), overwrite: false)
                throw Failure(message: "move onto an existing file without overwrite succeeded")
            } catch let error as BackendError {
                try require(error.code == .alreadyExists, "expected alreadyExists, got \(error.code)")
            }
            try await backend.move(from: path("move/a.jpg"), to: path("move/b.jpg"), overwrite: true)
            try require(try await backend.stat(path("move/a.jpg")) == nil, "the source of a move is still there")
            try require(try await fetch(backend, "move/b.jpg", scratch: scratch) == bytesA, "moved file differs")
            try await backend.move(from: path("move/b.jpg"), to: path("moved/elsewhere/c.jpg"), overwrite: false)
            try require(try await backend.stat(path("moved/elsewhere/c.jpg"))?.size == 111, "move into a new folder failed")
        },
        Check(name: "copy duplicates a file into a new folder and leaves the source; overwrite: false refuses an existing target") { backend, scratch in
            guard backend.capabilities.serverSideCopy else {
                do {
                    try await backend.copy(from: path("a.jpg"), to: path("b.jpg"), overwrite: true)
                    throw Failure(message: "copy succeeded on a backend without serverSideCopy")
                } catch let error as BackendError {
                    try require(error.code == .unsupported, "expected unsupported, got \(error.code)")
                }
                return
            }
            let (a, bytesA) = try source(scratch, size: 70_000, seed: 40, to: "copy/a.jpg", modified: 1_600_000_000.5)
            let (b, bytesB) = try source(scratch, size: 333, seed: 41, to: "copy/b.jpg")
            _ = try await backend.upload(a, observer: NullTransferObserver())
            _ = try await backend.upload(b, observer: NullTransferObserver())
            try await backend.copy(from: path("copy/a.jpg"), to: path("copied/deeper/a.jpg"), overwrite: false)
            try require(try await fetch(backend, "copied/deeper/a.jpg", scratch: scratch) == bytesA, "the copy differs")
            try require(try await fetch(backend, "copy/a.jpg", scratch: scratch) == bytesA, "the copy's source changed")
            do {
                try await backend.copy(from: path("copy/a.jpg"), to: path("copy/b.jpg"), overwrite: false)
                throw Failure(message: "copy onto an existing file without overwrite succeeded")
            } catch let error as BackendError {
                try require(error.code == .alreadyExists, "expected alreadyExists, got \(error.code)")
            }
            try require(try await fetch(backend, "copy/b.jpg", scratch: scratch) == bytesB, "a refused copy changed the target")
            try await backend.copy(from: path("copy/a.jpg"), to: path("copy/b.jpg"), overwrite: true)
            try require(try await fetch(backend, "copy/b.jpg", scratch: scratch) == bytesA, "copy with overwrite did not replace")
            do {
                try await backend.copy(from: path("copy/missing.jpg"), to: path("copy/c.jpg"), overwrite: false)
                throw Failure(message: "copy of a missing file succeeded")
            } catch let error as BackendError {
                try require(error.code == .notFound, "expected notFound for a missing source, got \(error.code)")
            }
            let names = try await backend.list(path("copy")).map(\.path.name)
            try require(names == ["a.jpg", "b.jpg"], "list(copy) = \(names)")
        },
        Check(name: "delete removes files and empty folders, and a missing file is no error") { backend, scratch in
            let (request, _) = try source(scratch, size: 10, seed: 27, to: "gone/x.jpg")
            _ = try await backend.upload(request, observer: NullTransferObserver())
            try await backend.delete(path("gone/x.jpg"))
            try require(try await backend.stat(path("gone/x.jpg")) == nil, "deleted file still stats")
            try await backend.delete(path("gone/x.jpg"))
            try await backend.delete(path("gone"))
            try require(try await backend.stat(path("gone")) == nil, "deleted folder still stats")
        },
        Check(name: "deleteFiles removes every file it is given, and a missing one counts as deleted") { backend, scratch in
            let names = ["batch/a.jpg", "batch/b & c.jpg", "batch/sub/d.gpx"]
            for (index, name) in names.enumerated() {
                let (request, _) = try source(scratch, size: 10 + index, seed: 40 + UInt64(index), to: name)
                _ = try await backend.upload(request, observer: NullTransferObserver())
            }
            let failures = try await backend.deleteFiles(try (names + ["batch/missing.jpg"]).map(path))
            try require(failures.isEmpty, "deleteFiles failed for \(failures.map { "\($0.key): \($0.value)" })")
            for name in names {
                try require(try await backend.stat(path(name)) == nil, "\(name) still stats after deleteFiles")
            }
        },
        Check(name: "makeDirectory creates parents and is idempotent") { backend, _ in
            try await backend.makeDirectory(path("p/q/r"))
            try await backend.makeDirectory(path("p/q/r"))
            try require(try await backend.stat(path("p/q/r"))?.kind == .directory, "folder missing after makeDirectory")
        },
        Check(name: "listTree walks every folder") { backend, scratch in
            for (index, name) in ["t/1.jpg", "t/a/2.jpg", "t/a/b/3.jpg", "t/c/4.gpx"].enumerated() {
                let (request, _) = try source(scratch, size: 10 + index, seed: 30 + UInt64(index), to: name)
                _ = try await backend.upload(request, observer: NullTransferObserver())
            }
            let tree = try await backend.listTree(path("t")).map(\.path.string).sorted()
            try require(tree == ["t/1.jpg", "t/a/2.jpg", "t/a/b/3.jpg", "t/c/4.gpx"], "listTree = \(tree)")
            try require(try await backend.listTree(path("missing")).isEmpty, "listTree of a missing folder is not empty")
        },
    ]
}
