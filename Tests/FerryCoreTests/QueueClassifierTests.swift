import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

/// One row of a classification table: the file at `path` of `size` bytes goes to `queue`.
struct QueueCase: Sendable, CustomTestStringConvertible {
    var path: String
    var size: Int64
    var queue: String

    init(_ path: String, _ size: Int64, _ queue: String) {
        self.path = path
        self.size = size
        self.queue = queue
    }

    /// A file of a typical, small size.
    init(_ path: String, _ queue: String) {
        self.init(path, 1000, queue)
    }

    var testDescription: String { "\(path) (\(size) B) → \(queue)" }
}

@Suite("QueueClassifier")
struct QueueClassifierTests {
    static let mebibyte: Int64 = 1 << 20
    static let standard: QueueClassifier = {
        do {
            return try QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")
        } catch {
            fatalError("the standard queue rules must compile: \(error)")
        }
    }()

    static let thumbnailCases: [QueueCase] = [
        QueueCase(".thumbnails/a.jpg", "thumbnails"),
        QueueCase("x/y/.thumbnails/a.jpg", "thumbnails"),
        QueueCase("DCIM/.thumbnails/deep/a.png", "thumbnails"),
        QueueCase("thumbnails/a.jpg", "thumbnails"),
        QueueCase("Photos/Thumbnails/a.JPG", "thumbnails"),
        QueueCase(".thumbs/a.jpg", "thumbnails"),
        QueueCase("x/.THUMBS/a.webp", "thumbnails"),
        QueueCase("IMG_0001.thumb.jpg", "thumbnails"),
        QueueCase("IMG_0001_thumb.jpg", "thumbnails"),
        QueueCase("IMG_0001-thumb.JPG", "thumbnails"),
        QueueCase("deep/dir/IMG_0001_THUMB.png", "thumbnails"),
        // A thumbnail folder wins over every other rule for small files, whatever the extension.
        QueueCase(".thumbnails/track.gpx", "thumbnails"),
        QueueCase(".thumbnails/cache.zip", "thumbnails"),
        QueueCase(".thumbnails/unknown.bin", "thumbnails"),
        QueueCase("photo.thumb.zip", "thumbnails"),
        QueueCase(".thumbnails/empty.jpg", 0, "thumbnails"),
        // Exactly at the inclusive bound.
        QueueCase(".thumbnails/a.jpg", mebibyte * 4, "thumbnails"),
    ]

    static let sizeBoundCases: [QueueCase] = [
        // Larger than 4 MiB: not a thumbnail; the next rules decide.
        QueueCase(".thumbnails/a.jpg", mebibyte * 4 + 1, "media"),
        QueueCase("x/.thumbnails/a.jpg", mebibyte * 5, "media"),
        QueueCase(".thumbnails/track.gpx", mebibyte * 5, "gpx"),
        QueueCase(".thumbnails/cache.zip", mebibyte * 100, "archives"),
        QueueCase(".thumbnails/unknown.bin", mebibyte * 5, "media"),
        QueueCase("IMG_0001_thumb.jpg", mebibyte * 4 + 1, "media"),
    ]

    static let mediaCases: [QueueCase] = [
        QueueCase("IMG_0001.JPG", "media"),
        QueueCase("DCIM/100CANON/IMG_0001.jpg", "media"),
        QueueCase("a.jpeg", "media"),
        QueueCase("a.png", "media"),
        QueueCase("a.HEIC", "media"),
        QueueCase("a.heif", "media"),
        QueueCase("a.webp", "media"),
        QueueCase("a.gif", "media"),
        QueueCase("a.tif", "media"),
        QueueCase("a.tiff", "media"),
        QueueCase("a.avif", "media"),
        QueueCase("RAW/a.dng", "media"),
        QueueCase("a.cr2", "media"),
        QueueCase("IMG_0001.CR3", "media"),
        QueueCase("a.nef", "media"),
        QueueCase("a.arw", "media"),
        QueueCase("a.raf", "media"),
        QueueCase("a.orf", "media"),
        QueueCase("a.rw2", "media"),
        QueueCase("a.srw", "media"),
        QueueCase("a.pef", "media"),
        QueueCase("VID_0001.mp4", "media"),
        QueueCase("clip.MOV", "media"),
        QueueCase("a.m4v", "media"),
        QueueCase("a.mkv", "media"),
        QueueCase("a.avi", "media"),
        QueueCase("00001.MTS", "media"),
        QueueCase("a.m2ts", "media"),
        QueueCase("a.3gp", "media"),
        QueueCase("a.webm", "media"),
        QueueCase("VID_0001.insv", "media"),
        QueueCase("VID_0001.LRV", "media"),
        // Large media files are still media.
        QueueCase("big.mp4", Int64(8) << 30, "media"),
    ]

    static let sidecarCases: [QueueCase] = [
        QueueCase("track.gpx", "gpx"),
        QueueCase("GPS/2024-06-01.GPX", "gpx"),
        QueueCase("IMG_0001.xmp", "gpx"),
        QueueCase("IMG_0001.JPG.xmp", "gpx"),
        QueueCase("a.kml", "gpx"),
        QueueCase("a.kmz", "gpx"),
        QueueCase("ride.fit", "gpx"),
        QueueCase("a.tcx", "gpx"),
        QueueCase("a.nmea", "gpx"),
        QueueCase("DJI_0001.SRT", "gpx"),
    ]

    static let archiveCases: [QueueCase] = [
        QueueCase("a.zip", "archives"),
        QueueCase("backup.tar", "archives"),
        QueueCase("backup.tar.gz", "archives"),
        QueueCase("backup.TAR.ZST", "archives"),
        QueueCase("backup.tar.xz", "archives"),
        QueueCase("a.tgz", "archives"),
        QueueCase("a.tbz2", "archives"),
        QueueCase("a.txz", "archives"),
        QueueCase("a.7z", "archives"),
        QueueCase("a.RAR", "archives"),
        QueueCase("old/2019/photos.zip", Int64(50) << 30, "archives"),
    ]

    static let defaultCases: [QueueCase] = [
        QueueCase("notes.txt", "media"),
        QueueCase("Makefile", "media"),
        QueueCase("a.gz", "media"),
        QueueCase("a.thumb", "media"),
        QueueCase("x/thumbnails.jpg.bak", "media"),
        QueueCase("a.jpg.part", "media"),
        QueueCase("tar.gz", "media"),
        QueueCase("empty", 0, "media"),
    ]

    @Test("thumbnail folders and thumbnail names go to thumbnails", arguments: thumbnailCases)
    func thumbnails(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("a thumbnail larger than max_size falls through to the next rules", arguments: sizeBoundCases)
    func thumbnailSizeBound(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("photos, raw files and videos go to media", arguments: mediaCases)
    func media(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("tracks and sidecars go to gpx", arguments: sidecarCases)
    func sidecars(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("archives go to archives", arguments: archiveCases)
    func archives(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("files no rule takes go to the default queue", arguments: defaultCases)
    func defaultQueue(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test(
        "a file named like a thumbnail folder is not inside it",
        arguments: [QueueCase("thumbnails", "media"), QueueCase("x/.thumbnails", "media"), QueueCase("DCIM/.thumbs", "media")])
    func folderNameIsNotAThumbnail(_ row: QueueCase) {
        #expect(Self.standard.queue(forPath: row.path, size: row.size) == row.queue)
    }

    @Test("the default queue is whatever the config names, even one without rules")
    func customDefaultQueue() throws {
        let classifier = try QueueClassifier(rules: QueueRule.standard, defaultQueue: "archives")
        #expect(classifier.defaultQueue == "archives")
        #expect(classifier.queue(forPath: "notes.txt", size: 1) == "archives")
        #expect(classifier.queue(forPath: "a.jpg", size: 1) == "media")
        let bare = try QueueClassifier(rules: [], defaultQueue: "all")
        #expect(bare.queue(forPath: "a.jpg", size: 1) == "all")
        #expect(bare.queueNames.isEmpty)
    }

    @Test("the first matching rule in priority order wins")
    func firstMatchWins() throws {
        let rules = [
            QueueRule(name: "first", match: ["*.jpg"], concurrency: 1),
            QueueRule(name: "second", match: ["*.jpg", "*.png"], concurrency: 1),
            QueueRule(name: "third", match: ["**"], concurrency: 1),
        ]
        let classifier = try QueueClassifier(rules: rules, defaultQueue: "second")
        #expect(classifier.queue(forPath: "a.jpg", size: 1) == "first")
        #expect(classifier.queue(forPath: "a.png", size: 1) == "second")
        // Reversed priority: the other rule now wins.
        let reversed = try QueueClassifier(rules: rules.reversed().dropFirst().map { $0 }, defaultQueue: "first")
        #expect(reversed.queue(forPath: "a.jpg", size: 1) == "second")
    }

    /// min_size and max_size are inclusive bounds.
    @Test("size bounds are inclusive", arguments: [
        (Int64(0), "small"), (Int64(99), "small"), (Int64(100), "medium"), (Int64(1000), "medium"),
        (Int64(1001), "large"), (Int64.max, "large"),
    ])
    func sizeBounds(size: Int64, queue: String) throws {
        let classifier = try QueueClassifier(rules: [
            QueueRule(name: "medium", match: ["*.bin"], minSize: 100, maxSize: 1000, concurrency: 1),
            QueueRule(name: "large", match: ["*.bin"], minSize: 1001, concurrency: 1),
            QueueRule(name: "small", match: ["*.bin"], maxSize: 99, concurrency: 1),
        ], defaultQueue: "other")
        #expect(classifier.queue(forPath: "x/y.bin", size: size) == queue)
        #expect(classifier.queue(forPath: "x/y.txt", size: size) == "other")
    }

    @Test("a rule with only min_size admits files at or above it")
    func minSizeOnly() throws {
        let classifier = try QueueClassifier(rules: [
            QueueRule(name: "big", match: ["*"], minSize: 10 << 20, concurrency: 1),
        ], defaultQueue: "rest")
        #expect(classifier.queue(forPath: "a.mp4", size: (10 << 20) - 1) == "rest")
        #expect(classifier.queue(forPath: "a.mp4", size: 10 << 20) == "big")
    }

    @Test("rank follows priority order; unknown queues rank last", arguments: [
        ("thumbnails", 0), ("media", 1), ("gpx", 2), ("archives", 3), ("retired", 4), ("", 4), ("MEDIA", 4),
    ])
    func rank(queue: String, rank: Int) {
        #expect(Self.standard.rank(of: queue) == rank)
    }

    @Test("queue names come out highest priority first")
    func queueNames() {
        #expect(Self.standard.queueNames == ["thumbnails", "media", "gpx", "archives"])
    }

    @Test("an invalid glob in a rule is refused")
    func invalidGlob() {
        let error = #expect(throws: GlobPattern.SyntaxError.self) {
            try QueueClassifier(rules: [QueueRule(name: "x", match: ["*.{jpg"], concurrency: 1)], defaultQueue: "x")
        }
        #expect(error?.pattern == "*.{jpg")
    }
}
