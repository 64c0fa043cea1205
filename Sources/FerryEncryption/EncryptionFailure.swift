import FerryPluginAPI

/// The errors encryption adds to a backend's, as `BackendError`s with the class the core
/// acts on.
enum EncryptionFailure {
    /// A stored file (or name) that is not what Ferry sealed with this key: damaged,
    /// tampered with, or cut short. That file fails; the run goes on.
    static func authentication(_ detail: String, path: String?) -> BackendError {
        BackendError(.protocolViolation, authenticationPrefix + "the encrypted file was altered or damaged (\(detail))",
                     path: path, retryable: false)
    }

    static func isAuthentication(_ error: BackendError) -> Bool {
        error.code == .protocolViolation && error.message.hasPrefix(authenticationPrefix)
    }

    private static let authenticationPrefix = "authentication failed: "

    /// The configured key or passphrase is not the remote's: the whole run stops with
    /// exit 2 before anything is written.
    static func wrongKey(remote: String, _ detail: String) -> BackendError {
        BackendError(.authenticationFailed, "wrong key or passphrase for the encrypted remote '\(remote)' (\(detail))")
    }
}
