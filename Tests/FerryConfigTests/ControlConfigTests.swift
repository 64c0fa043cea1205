import Testing

@testable import FerryConfig

/// `daemon:` (the control API) and `history:` in config.yml.
@Suite("Control API and history config")
struct ControlConfigTests {
    @Test("the keys load; paths are made absolute")
    func values() throws {
        let config = try ConfigLoaderTests.parse(DaemonConfigTests.base + """
            daemon:
              listen: 127.0.0.1:8384
              api_key_file: keys/api
              allowed_hosts: [nas.local, Media-PC]
            history:
              keep: 7d
              offline_alert: 25%
            """)
        #expect(config.control.listen == "127.0.0.1:8384")
        #expect(config.control.apiKeyFile == "/base/keys/api")
        #expect(config.control.allowedHosts == ["nas.local", "media-pc"])
        #expect(config.history.keep == .seconds(7 * 86_400))
        #expect(config.history.offlineAlert == 0.25)
    }

    @Test(arguments: [
        ("daemon:\n  listen: 8384\n", "expected HOST:PORT"),
        ("daemon:\n  listen: 0.0.0.0:8384\n", "set allow_non_loopback: true"),
        ("daemon:\n  listen: 0.0.0.0:8384\n  allow_non_loopback: true\n", "needs TLS"),
        ("daemon:\n  tls_certificate: cert.pem\n", "give both tls_certificate and tls_key"),
        ("daemon:\n  lisen: 127.0.0.1:1\n", "did you mean 'listen'"),
        ("history:\n  keep: 10m\n", "at least 1h"),
        ("history:\n  offline_alert: 150%\n", "expected a share"),
    ])
    func refused(yaml: String, message: String) {
        #expect {
            try ConfigLoaderTests.parse(DaemonConfigTests.base + yaml)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("listen addresses")
    func addresses() {
        #expect(ListenAddress("127.0.0.1:8384") == ListenAddress("127.0.0.1:8384"))
        #expect(ListenAddress("127.0.0.1:8384")?.isLoopback == true)
        #expect(ListenAddress("[::1]:80")?.host == "::1")
        #expect(ListenAddress("[::1]:80")?.isLoopback == true)
        #expect(ListenAddress("localhost:1")?.isLoopback == true)
        #expect(ListenAddress("192.168.1.2:8384")?.isLoopback == false)
        #expect(ListenAddress("::1:80") == nil)
        #expect(ListenAddress("host:0") == nil)
        #expect(ListenAddress("host:65536") == nil)
    }
}
