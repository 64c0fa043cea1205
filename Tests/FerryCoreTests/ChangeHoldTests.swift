import Testing
@testable import FerryCore
@testable import FerryPlanning

@Suite("holds: content looks and the hold policy")
struct ChangeHoldTests {
    static func random(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static let gpx = Array(String(repeating: "<trkpt lat=\"47.3769\" lon=\"8.5417\"><ele>408</ele><time>2024-05-01T10:00:00Z</time></trkpt>\n",
                                  count: 80).utf8)

    @Test("a file that fits its type's signature or text fits; random bytes under a media or text name look encrypted")
    func looks() {
        #expect(ContentLook.of(name: "IMG_1.jpg", prefix: [0xFF, 0xD8, 0xFF, 0xE0] + Self.random(60_000)) == .fitsType)
        #expect(ContentLook.of(name: "IMG_1.JPG", prefix: Self.random(60_000)) == .looksEncrypted)
        #expect(ContentLook.of(name: "clip.mov", prefix: [0, 0, 0, 20] + Array("ftypqt  ".utf8) + Self.random(5_000)) == .fitsType)
        #expect(ContentLook.of(name: "clip.mp4", prefix: Self.random(5_000)) == .looksEncrypted)
        #expect(ContentLook.of(name: "raw.CR2", prefix: [0x49, 0x49, 0x2A, 0x00] + Self.random(5_000)) == .fitsType)
        #expect(ContentLook.of(name: "track.gpx", prefix: Self.gpx) == .fitsType)
        #expect(ContentLook.of(name: "track.gpx", prefix: Self.random(Self.gpx.count)) == .looksEncrypted)
        // Random-looking bytes 1 KiB long are still told from text.
        #expect(ContentLook.of(name: "IMG_2.jpg", prefix: Self.random(1_024)) == .looksEncrypted)
    }

    @Test("no opinion: unknown types, short files, and non-random bytes without the signature")
    func noOpinion() {
        #expect(ContentLook.of(name: "data.bin", prefix: Self.random(60_000)) == .unknown)
        #expect(ContentLook.of(name: "README", prefix: Self.random(60_000)) == .unknown)
        #expect(ContentLook.of(name: "IMG_3.jpg", prefix: Self.random(200)) == .unknown)
        #expect(ContentLook.of(name: "IMG_4.jpg", prefix: Self.gpx) == .unknown)
    }

    @Test("a replacement looks encrypted only when the version it replaces fitted its type")
    func change() {
        #expect(ContentLook.change(from: .fitsType, to: .looksEncrypted) == .looksEncrypted)
        #expect(ContentLook.change(from: .looksEncrypted, to: .looksEncrypted) == .unknown)
        #expect(ContentLook.change(from: .unknown, to: .looksEncrypted) == .unknown)
        #expect(ContentLook.change(from: .unknown, to: .fitsType) == .fitsType)
    }

    @Test("the replacement hold: a share of the side's files, never below min_files",
          arguments: [(49, 100, false), (50, 100, true), (200, 2_000, false), (600, 2_000, false), (601, 2_000, true),
                      (10, 10, false), (1_000_000, 1_000_000, true)])
    func replacementShare(_ count: Int, _ files: Int, _ held: Bool) {
        let hold = HoldPolicy().replacementHold(replacing: count, of: files, side: "remote")
        #expect((hold != nil) == held)
        if let hold {
            #expect(hold.reason == .replacements)
            #expect(hold.message.contains("replace \(count) of \(files) files on the remote"))
            #expect(hold.message.contains("--accept-changes"))
        }
        #expect(HoldPolicy(replaceShare: nil).replacementHold(replacing: count, of: files, side: "remote") == nil)
    }

    @Test("the content hold: at least three, and at least half of the files whose type can be judged")
    func contentHold() {
        func looks(encrypted: Int, fitting: Int, unknown: Int) -> [(path: String, look: ContentLook)] {
            (0..<encrypted).map { ("e\($0).jpg", .looksEncrypted) } + (0..<fitting).map { ("f\($0).jpg", .fitsType) }
                + (0..<unknown).map { ("u\($0).bin", .unknown) }
        }
        let policy = HoldPolicy()
        #expect(policy.contentHold(looks(encrypted: 32, fitting: 0, unknown: 0))?.reason == .encryptedLooking)
        #expect(policy.contentHold(looks(encrypted: 3, fitting: 0, unknown: 29)) != nil)
        #expect(policy.contentHold(looks(encrypted: 2, fitting: 0, unknown: 30)) == nil)
        #expect(policy.contentHold(looks(encrypted: 16, fitting: 16, unknown: 0)) != nil)
        #expect(policy.contentHold(looks(encrypted: 15, fitting: 17, unknown: 0)) == nil)
        #expect(HoldPolicy(checksContent: false).contentHold(looks(encrypted: 32, fitting: 0, unknown: 0)) == nil)
        let hold = policy.contentHold(looks(encrypted: 5, fitting: 0, unknown: 0))
        #expect(hold?.message.contains("e0.jpg") == true)
    }

    @Test("replacements count for the side a run writes to: uploads on push, downloads on pull, both on sync")
    func replacementSides() throws {
        let policy = HoldPolicy(replaceShare: 0.3, minFiles: 1)
        #expect(throws: PlanError.self) {
            try Planner.checkReplacements(remote: 50, local: 0, remoteFiles: 100, localFiles: 100,
                                          options: PlanOptions(mode: .push, holds: policy))
        }
        try Planner.checkReplacements(remote: 0, local: 50, remoteFiles: 100, localFiles: 100, options: PlanOptions(mode: .push, holds: policy))
        try Planner.checkReplacements(remote: 50, local: 0, remoteFiles: 100, localFiles: 100, options: PlanOptions(mode: .pull, holds: policy))
        let error = try #require(throws: PlanError.self) {
            try Planner.checkReplacements(remote: 0, local: 50, remoteFiles: 100, localFiles: 100,
                                          options: PlanOptions(mode: .sync, holds: policy))
        }
        #expect(error.hold?.side == "local folder")
        try Planner.checkReplacements(remote: 50, local: 50, remoteFiles: 100, localFiles: 100, options: PlanOptions(mode: .sync))
    }

    @Test("the sample of replaced files is spread by hash, bounded, and the same whatever order the files come in")
    func sample() {
        let paths = (0..<1_000).map { "folder\($0 % 7)/IMG_\($0).jpg" }
        var forward = ReplacementSample(capacity: 32)
        var backward = ReplacementSample(capacity: 32)
        for path in paths { forward.offer(path, remote: RemoteVersion(size: 1, modifiedNanos: nil, etag: nil)) }
        for path in paths.reversed() { backward.offer(path, remote: RemoteVersion(size: 1, modifiedNanos: nil, etag: nil)) }
        #expect(forward.files.count == 32)
        #expect(forward.files == backward.files)
        #expect(Set(forward.files.map { $0.path.prefix(7) }).count > 3)
    }
}
