import FerryConfig
import FerryCore
import FerryJournal
import FerryPlanning
import FerryTestSupport
import Testing

/// What a person asks of the recorded folders (`FolderService`), which the commands and the
/// control API both call: the answer depends on the pair a name or path picks, never on
/// which of the two asked.
@Suite("the folder service")
struct FolderServiceTests {
    static func row(_ pair: FolderPairRecord, _ path: String, _ status: FileStatus) throws -> FileRecord {
        var record = FileRecord(pairId: try #require(pair.id), path: path, queue: "media", status: status, updatedAt: 1)
        record.local = LocalVersion(size: 4, modifiedNanos: 5, inode: 6)
        switch status {
        case .syncError: record.failForGood(failures: 5, error: "refused", at: 2)
        case .conflict: record.markConflict(reason: "changed on both sides")
        default: break
        }
        return record
    }

    /// The photos pair and an ad-hoc pair of another folder, each with failed files and a
    /// conflict, and one file in sync.
    static func service(in folder: TemporaryDirectory) async throws -> (FolderService, photos: FolderPairRecord, usb: FolderPairRecord) {
        let journal = try await StateFolder(directory: folder.path).journal()
        let photos = try await journal.folderPair(name: "photos", localRoot: "/data/photos", remoteLocation: "disk", at: 0)
        let usb = try await journal.folderPair(name: "usb", localRoot: "/mnt/usb", remoteLocation: "disk2", at: 0)
        try await journal.applyPlan([
            row(photos, "2024/a.jpg", .syncError), row(photos, "2024/a.xmp", .syncError), row(photos, "2025/b.jpg", .syncError),
            row(photos, "2025/c.jpg", .conflict), row(photos, "2025/d.jpg", .inSync),
            row(usb, "2024/a.jpg", .syncError), row(usb, "2025/c.jpg", .conflict),
        ])
        let service = FolderService(recorded: try await RecordedFolders(journal: journal), clock: InstantClock(wallStart: 100))
        return (service, photos, usb)
    }

    @Test("a retry resets the failed files the targets name, pair by pair, and only those")
    func retry() async throws {
        let folder = TemporaryDirectory()
        let (service, photos, usb) = try await Self.service(in: folder)
        let first = try await service.retry([(photos, "2024"), (usb, nil)])
        #expect(first.map(\.pair.name) == ["photos", "usb"])
        #expect(first.map(\.paths) == [["2024/a.jpg", "2024/a.xmp"], ["2024/a.jpg"]])
        let photosId = try #require(photos.id)
        let record = try #require(try await service.journal.record(pairId: photosId, path: "2024/a.jpg"))
        #expect(record.status != .syncError && record.action != nil && record.attempts == 0, "\(record)")
        // What is left: the one failed file of photos outside 2024.
        let rest = try await service.retryAll()
        #expect(rest.flatMap { change in change.paths.map { "\(change.pair.name):\($0)" } } == ["photos:2025/b.jpg"])
        #expect(try await service.retryAll().allSatisfy(\.paths.isEmpty))
    }

    @Test("a conflict is found from the current directory, or from a folder's root as status prints it")
    func resolve() async throws {
        let folder = TemporaryDirectory()
        let (service, photos, _) = try await Self.service(in: folder)
        // An absolute path: only the pair holding it.
        let here = try await service.resolve("/data/photos/2025/c.jpg", currentDirectory: "/", keep: .local)
        #expect(here.map(\.pair.name) == ["photos"] && here.map(\.paths) == [["2025/c.jpg"]])
        let photosId = try #require(photos.id)
        let record = try #require(try await service.journal.record(pairId: photosId, path: "2025/c.jpg"))
        #expect(record.resolution == .local)
        // As `ferry status --conflicts` prints it, from anywhere: every pair with that conflict left.
        let printed = try await service.resolve("2025/c.jpg", currentDirectory: "/", keep: .remote)
        #expect(printed.map(\.pair.name) == ["usb"])
        #expect(try await service.resolve("/data/photos/2025/d.jpg", currentDirectory: "/", keep: .local).isEmpty)
    }

    @Test("totals and media items are the pair's own")
    func reading() async throws {
        let folder = TemporaryDirectory()
        let (service, photos, usb) = try await Self.service(in: folder)
        let totals = try await service.totals(of: photos)
        #expect(totals.failedFiles == 3 && totals.conflictedFiles == 1 && totals[.inSync].files == 1)
        #expect(try await service.totals(of: usb).failedFiles == 1)
        let items = try await service.items(of: photos, by: .standard)
        #expect(items.map(\.key).contains("2024/a"), "\(items.map(\.key))")
        #expect(items.first { $0.key == "2024/a" }?.files.map(\.path) == ["2024/a.jpg", "2024/a.xmp"])
    }

    @Test("forgetting: a configured folder by its name only, an ad-hoc pair by its path")
    func forget() async throws {
        let folder = TemporaryDirectory()
        let (service, _, _) = try await Self.service(in: folder)
        let config = RecordedFoldersTests.config
        #expect(try await service.forget("/data/photos", config: config, currentDirectory: "/").isEmpty)
        #expect(try await service.forget("../usb", config: config, currentDirectory: "/mnt/x").map(\.name) == ["usb"])
        #expect(try await service.forget("photos", config: config, currentDirectory: "/").map(\.name) == ["photos"])
        #expect(try await service.journal.folderPairs().isEmpty)
        #expect(try await service.journal.fileCount() == 0)
    }
}
