import Testing
@testable import FerryCore
@testable import FerryPlanning

@Suite("RemoteVersion")
struct RemoteVersionTests {
    /// Apache answers a download in the first second after a write with `W/"6-abc"`, and
    /// lists the same file as `"6-abc"` a second later: one version, not a remote change.
    @Test("a weak ETag is the same version as the strong one with the same value")
    func weakAndStrongETagsAreOneVersion() {
        let downloaded = RemoteVersion(size: 6, modifiedNanos: 1, etag: #"W/"6-abc""#)
        let listed = RemoteVersion(size: 6, modifiedNanos: 1, etag: #""6-abc""#)
        #expect(downloaded.etag == #""6-abc""#)
        #expect(downloaded == listed)
        #expect(downloaded.isSameVersion(as: listed))
        #expect(!downloaded.isSameVersion(as: RemoteVersion(size: 6, modifiedNanos: 1, etag: #""6-abd""#)))
    }

    /// Journals written before the marker was dropped on the way in still hold `W/"…"`.
    @Test("a stored weak ETag compares without its marker")
    func storedWeakETagComparesWithoutMarker() {
        var stored = RemoteVersion(size: 6, modifiedNanos: 1, etag: nil)
        stored.etag = #"W/"6-abc""#
        #expect(stored.isSameVersion(as: RemoteVersion(size: 6, modifiedNanos: 1, etag: #""6-abc""#)))
    }
}
