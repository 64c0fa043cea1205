@testable import FerryConfig
import FerryEncryption
import FerryPluginAPI
import Testing

/// `encryption:` on a remote: read into `EncryptionSettings`, errors with line and column.
@Suite struct EncryptionConfigTests {
    static func remote(_ encryption: String) -> String {
        """
        remotes:
          vault:
            type: local
            path: /srv/vault
            encryption:
        \(encryption)
        """
    }

    @Test func keyFileAndNames() throws {
        let config = try ConfigLoaderTests.parse(Self.remote("      key_file: keys/vault.key\n      names: plain"))
        let remote = try #require(config.remote(named: "vault"))
        #expect(remote.encryption == EncryptionSettings(key: .keyFile("/base/keys/vault.key"), names: .plain))
        #expect(remote.options == ["path": "/srv/vault"])
    }

    @Test func passphraseWithEncryptedNamesByDefault() throws {
        let config = try ConfigLoaderTests.parse(Self.remote("      passphrase_env: FERRY_VAULT_PASS"))
        #expect(config.remote(named: "vault")?.encryption == EncryptionSettings(key: .passphraseEnvironment("FERRY_VAULT_PASS")))
        #expect(try ConfigLoaderTests.parse("remotes:\n  r:\n    type: local\n    path: /x\n").remotes[0].encryption == nil)
    }

    @Test(arguments: [
        ("      key_file: a.key\n      passphrase_env: P", 7, 7, "not both", "remotes.vault.encryption.passphrase_env"),
        ("      names: hidden\n      key_file: a.key", 6, 14, "expected encrypted or plain", "remotes.vault.encryption.names"),
        ("      names: plain", 6, 7, "missing key_file", "remotes.vault.encryption"),
        ("      key_fille: a.key", 6, 7, "did you mean 'key_file'", "remotes.vault.encryption.key_fille"),
        ("      passphrase_env: my pass", 6, 23, "name of an environment variable", "remotes.vault.encryption.passphrase_env"),
    ])
    func errorsNameTheLineAndColumn(yaml: String, line: Int, column: Int, mentions: String, key: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigLoaderTests.parse(Self.remote(yaml)) }
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.column == column, "\(String(describing: error))")
        #expect(error?.message.contains(mentions) == true, "\(String(describing: error))")
        #expect(error?.key == key)
    }
}
