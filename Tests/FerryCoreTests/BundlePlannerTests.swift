import ArchiveCodec
@testable import FerryJournal
import FerryConfig
import Foundation
import FerryPluginAPI
import Testing
@testable import FerryBundles
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

@Suite("BundlePlanner and BundleCatalog")
struct BundlePlannerTests {
    static let now = 1_800_000_000.0
    static let day: Int64 = 86_400 * 1_000_000_000
    static let classifier = try! QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")

    static func upload(_ path: String, size: Int64 = 300, ageDays: Int64 = 100, remote: RemoteVersion? = nil) -> FileRecord {
        var record = FileRecord(pairId: 1, path: path, queue: "media", status: .needsUpload, updatedAt: now)
        record.action = .upload
        record.local = LocalVersion(size: size, modifiedNanos: Int64(now * 1e9) - ageDays * day, inode: 1)
        record.remote = remote
        return record
    }

    static func rule(minFiles: Int = 2, bundleSize: Int64 = 64 << 10) -> ArchiveRule {
        ArchiveRule(match: ["*.txt"], olderThan: .seconds(30 * 86_400), maxFileSize: 1000, bundleSize: bundleSize,
                    format: .tarZstd, minFiles: minFiles)
    }

    static func partition(_ jobs: [FileRecord], rule: ArchiveRule? = rule(), catalog: BundleCatalog = BundleCatalog(),
                          mode: SyncMode = .push) -> BundlePlanner.Partition {
        BundlePlanner.partition(jobs: jobs, catalog: catalog, mode: mode, rule: rule,
                                matcher: try! rule.map { try GlobSet($0.match) }, now: now)
    }

    @Test("only new, cold, small, matching uploads are bundled; the rest stays with the engine in order")
    func eligibility() {
        let jobs = [
            Self.upload("a/cold-1.txt"),
            Self.upload("a/recent.txt", ageDays: 2),
            Self.upload("a/big.txt", size: 5000),
            Self.upload("a/photo.jpg"),
            Self.upload("a/on-remote.txt", remote: RemoteVersion(size: 1, modifiedNanos: 1, etag: nil)),
            Self.upload("b/cold-2.txt"),
        ]
        let result = Self.partition(jobs)
        #expect(result.newBundles.map { $0.map(\.path) } == [["a/cold-1.txt", "b/cold-2.txt"]])
        #expect(result.engineJobs.map(\.path) == ["a/recent.txt", "a/big.txt", "a/photo.jpg", "a/on-remote.txt"])
        #expect(Self.partition(jobs, rule: nil).engineJobs == jobs)
    }

    @Test("bundles are cut at bundle_size; a group smaller than min_files goes plain")
    func grouping() {
        let jobs = (0..<25).map { Self.upload(String(format: "f%02d.txt", $0), size: 1000) }
        // 1000 bytes + 512 per member: 10 fit in 15,120 bytes.
        let result = Self.partition(jobs, rule: Self.rule(minFiles: 6, bundleSize: 15_120))
        #expect(result.newBundles.map(\.count) == [10, 10])
        #expect(result.engineJobs.map(\.path) == (20..<25).map { String(format: "f%02d.txt", $0) })
    }

    @Test("many tiny files with long names are cut into bundles whose manifests stay readable")
    func manifestBound() throws {
        // 0-byte files, 2,000-byte paths: 6 KiB of manifest each, 512 bytes of bundle.
        let folder = String(repeating: "d/", count: 995)
        let jobs = (0..<2_000).map { Self.upload(folder + String(format: "f%05d.txt", $0), size: 0) }
        let result = Self.partition(jobs, rule: Self.rule(minFiles: 2, bundleSize: 1 << 30))
        #expect(result.newBundles.count > 1)
        for bundle in result.newBundles {
            let estimate = bundle.reduce(Int64(0)) { $0 + BundleManifest.bytes(forMemberPath: $1.path) }
            #expect(estimate <= BundleManifest.plannedMaxSize)
            // The estimate is an upper bound of the manifest Ferry writes.
            let manifest = BundleManifest(bundle: "bundle-20260101T000000Z-00000001.tar.zst", format: "tar.zst", size: 1,
                                          createdAt: 1_800_000_000.123, members: bundle.map {
                BundleManifest.Member(path: $0.path, entry: $0.path, size: Int64.max, modifiedNanos: Int64.max,
                                      sha256: String(repeating: "f", count: 64))
            })
            #expect(Int64(manifest.encoded().count) <= estimate + 300)
        }
    }

    static func catalog(_ paths: [String], plain: Set<String> = []) -> BundleCatalog {
        var catalog = BundleCatalog()
        let bundle = BundleRecord(pairId: 1, name: "bundle-20260101T000000Z-00000001.tar.zst", format: "tar.zst", size: 10,
                                  manifestSize: 10, manifestModifiedNanos: nil, createdAt: 1)
        catalog.add(bundle, file: RemoteEntry(path: try! RelativePath(".ferry-bundles/" + bundle.name), kind: .file, size: 10, modifiedNanos: nil),
                    members: paths.map {
                        BundleMemberRecord(pairId: 1, bundle: bundle.name, path: $0, entryName: $0, size: 300,
                                           modifiedNanos: 5, sha256: "", stale: false)
                    })
        var remote: [String: RemoteEntry] = [:]
        for path in plain { remote[path] = RemoteEntry(path: try! RelativePath(path), kind: .file, size: 1, modifiedNanos: 1) }
        catalog.addVirtualEntries(to: &remote, root: .root)
        return catalog
    }

    @Test("push: a bundled file sent plain leaves its bundle; a bundled-only deletion is the bundle transfers'")
    func pushLeaving() {
        let catalog = Self.catalog(["x.txt", "y.txt", "z.txt"], plain: ["z.txt"])
        var delete = Self.upload("y.txt")
        delete.action = .deleteRemote
        var deletePlain = Self.upload("z.txt")
        deletePlain.action = .deleteRemote
        let changed = Self.upload("x.txt", remote: RemoteVersion(size: 300, modifiedNanos: 5, etag: nil))
        let result = Self.partition([changed, delete, deletePlain], catalog: catalog)
        #expect(result.leavingBundles.map(\.path) == ["x.txt"])
        #expect(result.bundledDeletions.map(\.path) == ["y.txt"])
        // z.txt has a plain copy: deleting it is an ordinary remote deletion.
        #expect(result.engineJobs.map(\.path) == ["x.txt", "z.txt"])
        #expect(result.newBundles.isEmpty)
    }

    @Test("pull: downloads of bundled-only files are restored from their bundle; plain copies win")
    func pullRestores() {
        let catalog = Self.catalog(["x.txt", "y.txt"], plain: ["y.txt"])
        var x = FileRecord(pairId: 1, path: "x.txt", queue: "media", status: .needsDownload, updatedAt: 0)
        x.action = .download
        var y = x
        y.path = "y.txt"
        let result = Self.partition([x, y], catalog: catalog, mode: .pull)
        #expect(result.restores.mapValues { $0.map(\.path) } == ["bundle-20260101T000000Z-00000001.tar.zst": ["x.txt"]])
        #expect(result.engineJobs.map(\.path) == ["y.txt"])
    }

    @Test("manifest paths that could escape the folder are refused, never planned", arguments: [
        "../escape.txt", "/etc/passwd", "a/../../b", "./a", "a//b", "a/", ".ferry-bundles/x", "tab\there",
    ])
    func hostilePaths(_ path: String) {
        let catalog = Self.catalog([path, "fine.txt"])
        #expect(catalog.members.keys.sorted() == ["fine.txt"])
        #expect(catalog.refusals.map(\.path) == [path])
    }

    @Test("members the pair ignores (the state folder inside the folder, its patterns) are never planned or restored")
    func ignoredMembers() throws {
        var catalog = Self.catalog([])
        let bundle = try #require(catalog.bundles.values.first)
        catalog.add(bundle, file: RemoteEntry(path: try RelativePath(".ferry-bundles/" + bundle.name), kind: .file, size: 10,
                                              modifiedNanos: nil),
                    members: ["st/api-key", "st/journal.sqlite", "notes/fine.txt", "notes/x.tmp"].map {
                        BundleMemberRecord(pairId: 1, bundle: bundle.name, path: $0, entryName: $0, size: 300,
                                           modifiedNanos: 5, sha256: "", stale: false)
                    })
        var remote: [String: RemoteEntry] = [:]
        catalog.addVirtualEntries(to: &remote, root: .root, ignore: try GlobSet(["/st", "/st/**", "*.tmp"]))
        #expect(remote.keys.sorted() == ["notes/fine.txt"])
        #expect(catalog.members.keys.sorted() == ["notes/fine.txt"])
    }

    @Test("bundle names and manifest names round-trip; others are not taken for bundles")
    func naming() {
        let name = BundleNaming.newName(format: .tarZstd, at: 1_763_851_501, random: 0xab)
        #expect(name == "bundle-20251122T224501Z-000000ab.tar.zst")
        #expect(BundleNaming.bundleName(ofManifest: BundleNaming.manifestName(for: name)) == name)
        #expect(BundleNaming.bundleName(ofManifest: "notes.manifest.json") == nil)
        #expect(!BundleNaming.isBundleName("bundle-x.exe"))
        #expect(BundleNaming.format(of: "bundle-1.zip") == .zip)
    }

    @Test("a manifest that names another bundle or has another version is refused")
    func manifestChecks() throws {
        let name = "bundle-20260101T000000Z-00000001.tar.gz"
        let manifest = BundleManifest(bundle: name, format: "tar.gz", size: 1, createdAt: 1, members: [])
        #expect(try BundleManifest.decode(manifest.encoded(), name: name + ".manifest.json") == manifest)
        #expect(throws: BundleError.self) { try BundleManifest.decode(manifest.encoded(), name: "bundle-other.tar.gz.manifest.json") }
        var future = manifest
        future.ferryBundleManifest = 2
        #expect(throws: BundleError.self) { try BundleManifest.decode(future.encoded(), name: name + ".manifest.json") }
        #expect(throws: BundleError.self) { try BundleManifest.decode(Data("{".utf8), name: name + ".manifest.json") }
    }
}
