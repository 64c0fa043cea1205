import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// Obtains a remote's keys once, on its first use: reads (or, on a remote that has none
/// yet, writes) the header object, derives the master key from the key file or the
/// passphrase, and compares the key check. Every operation of `EncryptedBackend` waits for
/// it, so with a wrong key nothing is listed, read or written.
actor KeyUnlock {
    private let inner: any Backend
    private let settings: EncryptionSettings
    private let remoteName: String
    private let scratch: ScratchFolder
    private let environment: [String: String]
    private var unlocking: Task<Result<EncryptionKeys, BackendError>, Never>?

    init(inner: any Backend, settings: EncryptionSettings, remoteName: String, scratch: ScratchFolder,
         environment: [String: String]) {
        self.inner = inner
        self.settings = settings
        self.remoteName = remoteName
        self.scratch = scratch
        self.environment = environment
    }

    func keys() async throws(BackendError) -> EncryptionKeys {
        if let unlocking { return try await unlocking.value.get() }
        let task = Task { [inner, settings, remoteName, scratch, environment] () async -> Result<EncryptionKeys, BackendError> in
            do throws(BackendError) {
                return .success(try await Self.unlock(inner: inner, settings: settings, remoteName: remoteName,
                                                      scratch: scratch, environment: environment))
            } catch {
                return .failure(error)
            }
        }
        unlocking = task
        let result = await task.value
        // An outage is worth another attempt later; a wrong key is not.
        if case let .failure(error) = result, error.isRetryable { unlocking = nil }
        return try result.get()
    }

    private static func unlock(inner: any Backend, settings: EncryptionSettings, remoteName: String, scratch: ScratchFolder,
                               environment: [String: String]) async throws(BackendError) -> EncryptionKeys {
        let headerPath = try RemotePath(RemoteKeyHeader.objectName)
        let stored = try await readHeader(inner: inner, at: headerPath, remoteName: remoteName, scratch: scratch)
        func passphrase(_ variable: String) throws(BackendError) -> String {
            guard let value = environment[variable], !value.isEmpty else {
                throw BackendError(.authenticationFailed,
                                   "the encrypted remote '\(remoteName)' takes its passphrase from $\(variable), which is not set")
            }
            return value
        }
        if let stored {
            let master: [UInt8]
            switch (settings.key, stored.kdf) {
            case let (.keyFile(path), .keyFile):
                master = try await BlockingIO.run { () throws(BackendError) in try MasterKey.read(keyFile: path) }
            case let (.passphraseEnvironment(variable), .scrypt):
                guard let parameters = stored.scrypt, parameters.isReasonable else {
                    throw EncryptionFailure.wrongKey(remote: remoteName, "its header's scrypt parameters are missing or out of bounds")
                }
                let text = try passphrase(variable)
                master = try await BlockingIO.run { () throws(BackendError) in try parameters.deriveMaster(passphrase: text) }
            case (.keyFile, .scrypt):
                throw EncryptionFailure.wrongKey(remote: remoteName, "the remote was set up with a passphrase, config.yml gives key_file")
            case (.passphraseEnvironment, .keyFile):
                throw EncryptionFailure.wrongKey(remote: remoteName, "the remote was set up with a key file, config.yml gives passphrase_env")
            }
            let keys = EncryptionKeys(master: master)
            guard Hex.decode(stored.keyCheck) == keys.check else {
                throw EncryptionFailure.wrongKey(remote: remoteName, "the key check in its \(RemoteKeyHeader.objectName) does not match")
            }
            return keys
        }

        // A remote without a header: its first use writes one.
        let header: RemoteKeyHeader
        let keys: EncryptionKeys
        switch settings.key {
        case let .keyFile(path):
            keys = EncryptionKeys(master: try await BlockingIO.run { () throws(BackendError) in try MasterKey.read(keyFile: path) })
            header = RemoteKeyHeader(format: RemoteKeyHeader.formatName, version: 1, kdf: .keyFile, scrypt: nil,
                                     keyCheck: Hex.encode(keys.check))
        case let .passphraseEnvironment(variable):
            let text = try passphrase(variable)
            let parameters = RemoteKeyHeader.ScryptParameters.fresh()
            keys = EncryptionKeys(master: try await BlockingIO.run { () throws(BackendError) in
                try parameters.deriveMaster(passphrase: text)
            })
            header = RemoteKeyHeader(format: RemoteKeyHeader.formatName, version: 1, kdf: .scrypt, scrypt: parameters,
                                     keyCheck: Hex.encode(keys.check))
        }
        let (file, handle) = try scratch.newFile()
        defer { scratch.remove(file) }
        let bytes = header.encoded()
        let modified = Int64(Date().timeIntervalSince1970) * 1_000_000_000
        try BackendError.catching {
            try handle.write(bytes, count: bytes.count, at: 0)
            try handle.setModificationTime(nanos: modified)
        }
        _ = try await inner.upload(UploadRequest(source: file, destination: headerPath, size: Int64(bytes.count),
                                                 modifiedNanos: modified, mayResume: false),
                                   observer: NullTransferObserver())
        return keys
    }

    private static func readHeader(inner: any Backend, at path: RemotePath, remoteName: String,
                                   scratch: ScratchFolder) async throws(BackendError) -> RemoteKeyHeader? {
        guard let entry = try await inner.stat(path) else { return nil }
        guard entry.kind == .file, entry.size <= RemoteKeyHeader.maxSize else {
            throw EncryptionFailure.wrongKey(remote: remoteName, "its \(RemoteKeyHeader.objectName) is not a Ferry header")
        }
        let (file, _) = try scratch.newFile()
        defer { scratch.remove(file) }
        _ = try await inner.download(DownloadRequest(source: path, partialFile: file, offset: 0, expected: entry),
                                     observer: NullTransferObserver())
        let bytes = try BackendError.catching { try OpenFile(file, mode: .read).readAll() }
        guard let header = RemoteKeyHeader.decode(bytes), header.version == 1 else {
            throw EncryptionFailure.wrongKey(remote: remoteName, "its \(RemoteKeyHeader.objectName) is not a Ferry header of version 1")
        }
        return header
    }
}
