import FerryTestSupport
import Foundation
import Testing

/// Holds through the real binary: a folder rewritten wholesale, or with encrypted-looking
/// bytes, stops before its first write; ordinary edits do not.
@Suite("holds: a run that would change too much waits for --accept-changes", .integration)
struct ChangeHoldRunTests {
    /// Where a hold test pushes: a local folder, or nginx / Apache over WebDAV.
    enum Target: String, CustomStringConvertible, CaseIterable {
        case local, nginx, apache
        var description: String { rawValue }
    }

    /// The remote URL and the folder on disk that holds the remote's files.
    static func remote(_ target: Target, work: Workspace) async throws -> (url: String, directory: String, server: TestServer?) {
        switch target {
        case .local:
            return (work.destination, work.destination, nil)
        case .nginx, .apache:
            let server = try await TestServer(target == .nginx ? .nginx : .apache)
            return ("dav://" + server.origin.dropFirst("http://".count) + "/dav/photos", server.directory + "/root/photos", server)
        }
    }

    /// Reproducible bytes (a 64-bit LCG), so a failure can be run again as it was.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// A photo as a camera writes one: the JPEG signature, then compressed (random-looking) data.
    static func writePhoto(_ path: String, seed: UInt64, size: Int = 6_000) throws {
        try Data([0xFF, 0xD8, 0xFF, 0xE1] + bytes(size - 4, seed: seed)).write(to: URL(fileURLWithPath: path))
    }

    /// A photo library: every path a photo, in its year's folder.
    /// Thousands of files are written and read on a thread of their own, here and below:
    /// on the cooperative pool (two threads here) they held back every other test's `await`.
    static func writeLibrary(_ paths: [String], in root: String) async throws {
        try await onOwnThread {
            for folder in Set(paths.map { $0.split(separator: "/")[0] }) {
                try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
            }
            for (index, path) in paths.enumerated() { try writePhoto(root + "/" + path, seed: UInt64(index)) }
        }
    }

    /// Rewrites each `(path, seed)` with a photo of `size` bytes.
    static func rewritePhotos(_ files: [(path: String, seed: UInt64)], size: Int = 6_000) async throws {
        try await onOwnThread {
            for file in files { try writePhoto(file.path, seed: file.seed, size: size) }
        }
    }

    /// A library large enough that the held share (30%), the 50-file floor and the
    /// 32-file content sample are all well inside it. It was 2,000 files: four times the
    /// fixture and transfer work (about 45 s of CPU for the suite) for no case more.
    static let libraryCount = 500

    static func photoPaths(_ count: Int) -> [String] {
        (0..<count).map { String(format: "%@/IMG_%04d.jpg", $0 % 4 == 0 ? "2024" : "2025", $0) }
    }

    static func contents(_ directory: String, ignoringFolders: Set<String> = []) async throws -> [String: Data] {
        try await onOwnThread {
            var result: [String: Data] = [:]
            for path in try TreeComparison.files(in: directory, ignoringFolders: ignoringFolders.union(TreeComparison.ferryRecords)).keys {
                result[path] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + path))
            }
            return result
        }
    }

    @Test("500 photos rewritten with random bytes are held before any write; the remote stays byte for byte; --accept-changes sends them",
          arguments: Target.allCases)
    func encryptedLookingRewriteIsHeld(_ target: Target) async throws {
        let work = Workspace()
        let (url, directory, server) = try await Self.remote(target, work: work)
        let paths = Self.photoPaths(Self.libraryCount)
        try await Self.writeLibrary(paths, in: work.source)
        let push = ["push", work.source, "--to", url, "--state", work.state, "--json"]
        let first = try await work.ferry(push)
        #expect(first.status == 0, "\(first.diagnostics)")
        let ignored = server?.bookkeepingFolders ?? []
        let before = try await Self.contents(directory, ignoringFolders: ignored)
        #expect(before.count == Self.libraryCount)

        // Ransomware: same names, ciphertext-like bytes.
        let source = work.source
        try await onOwnThread {
            for (index, path) in paths.enumerated() {
                try Data(Self.bytes(6_100, seed: 1_000_000 + UInt64(index))).write(to: URL(fileURLWithPath: source + "/" + path))
            }
        }
        for attempt in 1...2 {
            let held = try await work.ferry(push)
            #expect(held.status == 1, "attempt \(attempt): \(held.diagnostics)")
            #expect(held.standardError.contains("held:"), "\(held.diagnostics)")
            #expect(held.standardError.contains("look encrypted"), "\(held.diagnostics)")
            #expect(held.standardError.contains("--accept-changes"), "\(held.diagnostics)")
            #expect(held.events(named: "transferred").isEmpty)
            #expect(try await Self.contents(directory, ignoringFolders: ignored) == before, "attempt \(attempt): the remote changed")
        }

        let accepted = try await work.ferry(push + ["--accept-changes"])
        #expect(accepted.status == 0, "\(accepted.diagnostics)")
        #expect(accepted.int("uploaded") == Self.libraryCount)
        #expect(try await Self.contents(directory, ignoringFolders: ignored) == Self.contents(work.source))
    }

    @Test("ordinary edits of 10% of 500 photos are not held", arguments: [Target.local, .nginx])
    func ordinaryEditsPass(_ target: Target) async throws {
        let work = Workspace()
        let (url, directory, server) = try await Self.remote(target, work: work)
        let paths = Self.photoPaths(Self.libraryCount)
        try await Self.writeLibrary(paths, in: work.source)
        let push = ["push", work.source, "--to", url, "--state", work.state, "--json"]
        #expect(try await work.ferry(push).status == 0)

        // Edited in a photo editor: still JPEGs, new bytes, every tenth file.
        try await Self.rewritePhotos(paths.enumerated().filter { $0.offset % 10 == 3 }
            .map { (work.source + "/" + $0.element, 5_000_000 + UInt64($0.offset)) }, size: 7_000)
        let edited = try await work.ferry(push)
        #expect(edited.status == 0, "\(edited.diagnostics)")
        #expect(edited.int("uploaded") == Self.libraryCount / 10)
        #expect(try await Self.contents(directory, ignoringFolders: server?.bookkeepingFolders ?? []) == Self.contents(work.source))
    }

    @Test("a folder rewritten wholesale with valid photos is held by the replacement share, and holds: replace: off lets it through")
    func replacementShareIsHeld() async throws {
        let work = Workspace()
        let paths = Self.photoPaths(200)
        try await Self.writeLibrary(paths, in: work.source)
        let push = ["push", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(push).status == 0)
        let before = try await Self.contents(work.destination)

        try await Self.rewritePhotos(paths.prefix(120).enumerated().map { (work.source + "/" + $0.element, 9_000_000 + UInt64($0.offset)) })
        let held = try await work.ferry(push)
        #expect(held.status == 1, "\(held.diagnostics)")
        #expect(held.standardError.contains("held: the run would replace 120 of 200 files on the remote (limit 60)"), "\(held.diagnostics)")
        #expect(try await Self.contents(work.destination) == before)

        // The health report names the hold and its way out; --repair leaves it to a person.
        let doctor = try await work.ferry(["doctor", "--state", work.state, "--repair"])
        #expect(doctor.standardOutput.contains("held since its push run"), "\(doctor.diagnostics)")
        #expect(doctor.standardOutput.contains("--accept-changes"), "\(doctor.diagnostics)")
        #expect(doctor.standardOutput.contains("held; not accepted here"), "\(doctor.diagnostics)")

        let config = work.directory.child("config.yml")
        try Data("holds:\n  replace: off\n".utf8).write(to: URL(fileURLWithPath: config))
        let allowed = try await work.ferry(push + ["--config", config])
        #expect(allowed.status == 0, "\(allowed.diagnostics)")
        #expect(allowed.int("uploaded") == 120)
        #expect(try await Self.contents(work.destination) == Self.contents(work.source))
    }

    @Test("a sync that would download replacements over most local files is held for the local folder")
    func syncDownloadsAreHeld() async throws {
        let work = Workspace()
        let paths = Self.photoPaths(100)
        try await Self.writeLibrary(paths, in: work.source)
        let sync = ["sync", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(sync).status == 0)
        let before = try await Self.contents(work.source)

        // Another device rewrote the whole remote folder.
        try await Self.rewritePhotos(paths.enumerated().map { (work.destination + "/" + $0.element, 7_000_000 + UInt64($0.offset)) })
        let held = try await work.ferry(sync)
        #expect(held.status == 1, "\(held.diagnostics)")
        #expect(held.standardError.contains("replace 100 of 100 files on the local folder"), "\(held.diagnostics)")
        #expect(try await Self.contents(work.source) == before)
        let accepted = try await work.ferry(sync + ["--accept-changes"])
        #expect(accepted.status == 0, "\(accepted.diagnostics)")
        // The local versions the downloads replaced went to the trash.
        let trash: Set<String> = [".ferry-trash"]
        #expect(try await Self.contents(work.source, ignoringFolders: trash) == Self.contents(work.destination, ignoringFolders: trash))
    }
}
