import FerryEncryption
import Yams

/// `encryption:` on a remote of any type (docs/encryption.md).
extension ConfigReader {
    func encryptionSettings(_ node: Node, key: String) throws(ConfigError) -> EncryptionSettings {
        var source: EncryptionSettings.KeySource?
        var sourceNode: Node?
        var names = EncryptionSettings.Names.encrypted
        var cipher = EncryptionSettings.Cipher.auto
        for field in try mapping(node, key: key, allowed: Self.keys("remotes.NAME.encryption")) {
            let fieldKey = key + "." + field.key
            switch field.key {
            case "key_file", "passphrase_env":
                if sourceNode != nil {
                    throw error(field.keyNode, fieldKey, "give either key_file or passphrase_env, not both")
                }
                sourceNode = field.value
                if field.key == "key_file" {
                    source = .keyFile(try path(field.value, key: fieldKey))
                } else {
                    let variable = try string(field.value, key: fieldKey)
                    guard !variable.isEmpty, variable.allSatisfy({ $0 == "_" || $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                        throw error(field.value, fieldKey, "expected the name of an environment variable, such as FERRY_VAULT_PASS")
                    }
                    source = .passphraseEnvironment(variable)
                }
            case "names":
                names = try choice(field.value, key: fieldKey, unknown: "value", expected: "encrypted or plain")
            case "cipher":
                cipher = try choice(field.value, key: fieldKey, unknown: "cipher", expected: "auto, aes-256-gcm or chacha20-poly1305")
            default: break
            }
        }
        guard let source else {
            throw error(node, key, "missing key_file (a key written by ferry keygen PATH) or passphrase_env (an environment variable)")
        }
        return EncryptionSettings(key: source, names: names, cipher: cipher)
    }
}
