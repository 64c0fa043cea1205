@testable import ferry
import Testing

/// An ad-hoc pair's remote, shown as it can be typed after `--to` again.
@Suite struct PairLabelTests {
    @Test(arguments: [
        ("local:/backup/photos", "/backup/photos"),
        ("local:/backup#photos/2026", "/backup/photos/2026"),
        ("webdav:http://nas:8080/dav/#phone", "dav://nas:8080/dav/phone"),
        ("webdav:https://nas.local/remote.php/dav/files/me/", "davs://nas.local/remote.php/dav/files/me/"),
        ("http:http://127.0.0.1:8080/files/#photos", "http://127.0.0.1:8080/files/photos"),
        ("exec:cas#store", "exec:cas store"),
    ])
    func typableRemote(location: String, typed: String) {
        #expect(PairLabel.typable(remoteLocation: location) == typed)
    }
}
