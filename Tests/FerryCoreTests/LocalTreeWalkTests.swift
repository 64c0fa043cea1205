import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryPlanning

@Suite("walking a local folder in the journal's order, a batch at a time")
struct LocalTreeWalkTests {
    static func walkAll(_ root: String, limit: Int) throws -> (batches: [LocalTreeWalk.Batch], paths: [String]) {
        var walk = try LocalTreeWalk(root: root, ignore: try GlobSet(ScanSettings.builtInIgnores), followSymlinks: false)
        var batches: [LocalTreeWalk.Batch] = []
        // A walk that never finishes fails here instead of hanging the suite (no test tree
        // needs 100,000 calls).
        while !walk.isFinished && batches.count < 100_000 { batches.append(try walk.next(limit: limit)) }
        #expect(walk.isFinished, "the walk had not finished after \(batches.count) calls")
        return (batches, batches.flatMap { $0.entries.map(\.path.string) })
    }

    @Test("files come in the byte order of their paths (a folder sorts as its name and '/'), never more than asked at a time")
    func pathOrder() throws {
        let folder = TemporaryDirectory()
        let names = ["a.txt", "a/x.jpg", "a/b/c.jpg", "a0.jpg", "a b/c.jpg", "a-b.jpg", "B.jpg", "é.jpg", "z/y/x.mp4",
                     ".hidden/h.jpg", "Z.jpg", "a/b.jpg", "ab/.c.jpg"]
        for (index, name) in names.enumerated() { try TreeGenerator.write(at: folder.child(name), size: index, seed: UInt64(index)) }
        for limit in [1, 2, 5, 100] {
            let (batches, paths) = try Self.walkAll(folder.path, limit: limit)
            #expect(paths == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "limit \(limit)")
            #expect(batches.allSatisfy { $0.entries.count <= limit })
            // Only the last batch is short.
            #expect(batches.dropLast().allSatisfy { $0.entries.count == limit }, "limit \(limit)")
        }
    }

    @Test("names in two Unicode forms in one folder are kept apart as clashes; a clashing folder is not entered")
    func siblingClashes() throws {
        let folder = TemporaryDirectory()
        try TreeGenerator.write(at: folder.child("caf\u{E9}.jpg"), size: 1, seed: 1)
        try TreeGenerator.write(at: folder.child("cafe\u{301}.jpg"), size: 2, seed: 2)
        try TreeGenerator.write(at: folder.child("d\u{E9}j\u{E0}/one.jpg"), size: 3, seed: 3)
        try TreeGenerator.write(at: folder.child("de\u{301}ja\u{300}/one.jpg"), size: 4, seed: 4)
        try TreeGenerator.write(at: folder.child("ok/fine.jpg"), size: 5, seed: 5)
        let (batches, paths) = try Self.walkAll(folder.path, limit: 10)
        #expect(paths == ["ok/fine.jpg"])
        let clashes = batches.flatMap(\.clashes)
        #expect(clashes.count == 2)
        #expect(clashes.filter(\.hasFolder).count == 1)
        #expect(clashes.first { !$0.hasFolder }?.files.count == 2)
        // A whole scan still hands every clashing file to callers that decide about them.
        var whole = try LocalScanner.walk(root: folder.path, ignore: try GlobSet([]), followSymlinks: false).entries.map(\.path.string)
        whole.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(whole.count == 3 && whole.contains("ok/fine.jpg"))
    }

    @Test("the folders-only walk finds hidden folders (and the folders below them) without reading each file")
    func hiddenFolders() async throws {
        let folder = TemporaryDirectory()
        try TreeGenerator.write(at: folder.child("a/.thumbnails/x/IMG_1.jpg"), size: 1, seed: 1)
        try TreeGenerator.write(at: folder.child(".cache-not/IMG_2.jpg"), size: 1, seed: 2)
        try TreeGenerator.write(at: folder.child("b/.hidden-file.jpg"), size: 1, seed: 3)
        let found = await LocalScanner(root: folder.path, ignore: try GlobSet([".cache-not/**", ".cache-not"]),
                                       followSymlinks: false).hiddenFolders()
        #expect(Set(found) == ["a/.thumbnails", "a/.thumbnails/x"])
    }
}
