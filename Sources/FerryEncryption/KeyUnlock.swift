import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// Obtains a remote's keys once, on its first use: reads the header object (on a remote
/// that has none yet, prepares one, written before the first write), derives the master
/// key from the key file or the passphrase, and compares the key check. Every operation of `EncryptedBackend` waits for
/// it, so with a wrong key nothing is listed, read or written.
actor KeyUnlock {
    private let inner: any Backend
    private let settings: EncryptionSettings
    private let remoteName: String
    private let scratch: ScratchFolder
    private let environment: [String: String]
    private var unlocking: Task<Result<Unlocked, BackendError>, Never>?
    private var headerWrite: Task<Result<Void, BackendError>, Never>?

    init(inner: any Backend, settings: EncryptionSettings, remoteName: String, scratch: ScratchFolder,
         environment: [String: String]) {
        self.inner = inner
        self.settings = settings
        self.remoteName = remoteName
        self.scratch = scratch
        self.environment = environment
    }

    /// The keys; with `writing`, the remote's header object is written first if it has
    /// none yet (so reading a new remote, a dry run or a pull, writes nothing).
    func keys(writing: Bool = false) async throws(BackendError) -> EncryptionKeys {
        let unlocked = try await unlockedOnce()
        if writing, let header = unlocked.pendingHeader {
            try await writeOnce(header)
        }
        return unlocked.keys
    }

    private func unlockedOnce() async throws(BackendError) -> Unlocked {
        if let unlocking { return try await unlocking.value.get() }
        let task = Task { [inner, settings, remoteName, scratch, environment] () async -> Result<Unlocked, BackendError> in
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

    private func writeOnce(_ header: RemoteKeyHeader) async throws(BackendError) {
        if let headerWrite { return try await headerWrite.value.get() }
        let task = Task { [inner, scratch] () async -> Result<Void, BackendError> in
            do throws(BackendError) {
                return .success(try await Self.write(header, inner: inner, scratch: scratch))
            } catch {
                return .failure(error)
            }
        }
        headerWrite = task
        let result = await task.value
        if case .failure = result { headerWrite = nil }
        try result.get()
    }

    /// The keys, and the header a remote without one gets before its first write.
    struct Unlocked: Sendable {
        var keys: EncryptionKeys
        var pendingHeader: RemoteKeyHeader?
    }

    private static func unlock(inner: any Backend, settings: EncryptionSettings, remoteName: String, scratch: ScratchFolder,
                               environment: [String: String]) async throws(BackendError) -> Unlocked {
        let headerPath = try RelativePath(RemoteKeyHeader.objectName)
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
            return Unlocked(keys: keys, pendingHeader: nil)
        }

        // A remote without a header: its first write writes one.
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
        return Unlocked(keys: keys, pendingHeader: header)
    }

    private static func write(_ header: RemoteKeyHeader, inner: any Backend, scratch: ScratchFolder) async throws(BackendError) {
        let headerPath = try RelativePath(RemoteKeyHeader.objectName)
        let (file, handle) = try scratch.newFile()
        defer { scratch.remove(file) }
        let bytes = header.encoded()
        let modified = Int64(SystemClock().wallTime()) * 1_000_000_000
        try BackendError.catching {
            try handle.write(bytes, count: bytes.count, at: 0)
            try handle.setModificationTime(nanos: modified)
        }
        _ = try await inner.upload(UploadRequest(source: file, destination: headerPath, size: Int64(bytes.count),
                                                 modifiedNanos: modified, mayResume: false),
                                   observer: NullTransferObserver())
    }

    private static func readHeader(inner: any Backend, at path: RelativePath, remoteName: String,
                                   scratch: ScratchFolder) async throws(BackendError) -> RemoteKeyHeader? {
        guard let entry = try await inner.stat(path) else { return nil }
        guard entry.kind == .file, entry.size <= RemoteKeyHeader.maxSize else {
            throw EncryptionFailure.wrongKey(remote: remoteName, "its \(RemoteKeyHeader.objectName) is not a Ferry header")
        }
        let (file, _) = try scratch.newFile()
        defer { scratch.remove(file) }
        _ = try await inner.download(DownloadRequest(source: path, partialFile: file, offset: 0, expected: entry, flush: false),
                                     observer: NullTransferObserver())
        let bytes = try BackendError.catching { try OpenFile(file, mode: .read).readAll() }
        guard let header = RemoteKeyHeader.decode(bytes), header.version == 1 else {
            throw EncryptionFailure.wrongKey(remote: remoteName, "its \(RemoteKeyHeader.objectName) is not a Ferry header of version 1")
        }
        return header
    }
}
