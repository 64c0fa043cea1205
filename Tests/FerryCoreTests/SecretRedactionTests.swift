import FerryPluginAPI
import Testing

@Suite("secrets out of messages")
struct SecretRedactionTests {
    @Test("the password of user:password@ goes, whatever the scheme; the rest stays", arguments: [
        ("https://me:hunter2@nas/dav", "https://me:***@nas/dav"),
        ("dav://me:hunter2@nas.local:8443/dav/photos?x=1", "dav://me:***@nas.local:8443/dav/photos?x=1"),
        ("me:hunter2@nas/dav", "me:***@nas/dav"),
        ("https://me:p@ss:w@rd@nas/", "https://me:***@nas/"),
        ("https://me@nas/dav", "https://me@nas/dav"),
        ("https://nas/dav/a:b@c", "https://nas/dav/a:b@c"),
        ("nas:photos/2024", "nas:photos/2024"),
        ("/mnt/backup", "/mnt/backup"),
    ])
    func redaction(_ text: String, _ shown: String) {
        #expect(SecretRedaction.redactingPassword(text) == shown)
    }
}
