import FerryPluginAPI
import Foundation
import Testing

@testable import FerryCore
@testable import FerryEngine

/// Modification times kept in the remote catalog for a store that keeps none (issue 49).
@Suite("kept file times")
struct KeptFileTimeTests {
    static let kept = KeptFileTime(path: "DCIM/IMG_1.jpg", size: 100, etag: "\"abc\"", modifiedNanos: 1_600_000_000_500_000_000)

    static func entry(size: Int64, etag: String?) throws -> RemoteEntry {
        RemoteEntry(path: try RelativePath("DCIM/IMG_1.jpg"), kind: .file, size: size, modifiedNanos: 1_700_000_000_000_000_000, etag: etag)
    }

    @Test("a kept time applies to the version it was kept for only: same size and ETag")
    func appliesToItsVersion() throws {
        #expect(Self.kept.time(for: try Self.entry(size: 100, etag: "\"abc\"")) == Self.kept.modifiedNanos)
        #expect(Self.kept.time(for: try Self.entry(size: 100, etag: "W/\"abc\"")) == Self.kept.modifiedNanos)
        #expect(Self.kept.time(for: try Self.entry(size: 100, etag: "\"other\"")) == nil)
        #expect(Self.kept.time(for: try Self.entry(size: 101, etag: "\"abc\"")) == nil)
        #expect(Self.kept.time(for: try Self.entry(size: 100, etag: nil)) == nil)
    }

    @Test("times are kept for stores that keep none and list version tags")
    func neededBy() {
        #expect(KeptFileTime.needed(by: BackendCapabilities(preservesModificationTime: false, listingHasETags: true)))
        #expect(!KeptFileTime.needed(by: BackendCapabilities(preservesModificationTime: true, listingHasETags: true)))
        #expect(!KeptFileTime.needed(by: BackendCapabilities(preservesModificationTime: false, listingHasETags: false)))
    }

    @Test("a catalog without times is written as before; one with times reads back whole")
    func catalogEncoding() throws {
        let entries = [RemoteCatalog.Entry(path: ".thumbnails/a.jpg", size: 3, modifiedNanos: 4)]
        let plain = RemoteCatalog(entries: entries).encoded()
        #expect(!String(decoding: plain, as: UTF8.self).contains("times"))
        let withTimes = RemoteCatalog(entries: entries, times: [Self.kept])
        #expect(RemoteCatalog.decode(withTimes.encoded()) == withTimes)
        #expect(RemoteCatalog.decode(plain)?.times == nil)
    }
}
