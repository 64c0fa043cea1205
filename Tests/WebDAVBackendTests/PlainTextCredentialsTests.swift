import CurlTransport
import Testing

@Suite("credentials in clear text")
struct PlainTextCredentialsTests {
    static let basic = HTTPCredentials.basic(user: "me", password: "secret")

    @Test("basic auth and bearer tokens over plain http to another machine are warned about")
    func warned() {
        for url in ["http://nas.local/dav", "HTTP://192.168.1.5:8080/dav/", "http://me@nas/x", "http://[fe80::1]:80/"] {
            #expect(PlainTextCredentials.warning(baseURL: url, credentials: Self.basic, remote: "nas")?
                .contains("remote 'nas' sends its password in clear text") == true, "\(url)")
        }
        #expect(PlainTextCredentials.warning(baseURL: "http://nas.local/", credentials: .bearer(token: "t"), remote: "nas") != nil)
    }

    @Test("https, digest, no credentials and this machine are not")
    func notWarned() {
        #expect(PlainTextCredentials.warning(baseURL: "https://nas.local/dav", credentials: Self.basic, remote: "nas") == nil)
        #expect(PlainTextCredentials.warning(baseURL: "http://nas.local/dav", credentials: .digest(user: "me", password: "x"),
                                             remote: "nas") == nil)
        #expect(PlainTextCredentials.warning(baseURL: "http://nas.local/dav", credentials: .none, remote: "nas") == nil)
        for url in ["http://127.0.0.1:8080/dav", "http://localhost/dav", "http://[::1]:80/"] {
            #expect(PlainTextCredentials.warning(baseURL: url, credentials: Self.basic, remote: "nas") == nil, "\(url)")
        }
    }
}
