@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

/// A large encrypted upload that was interrupted is continued with the header it began
/// with, where the backend underneath continues its own; anything else starts afresh.
@Suite struct EncryptedUploadResumeTests {
    let directory = TemporaryDirectory("ferry-encryption-upload-resume")
    static let modified: Int64 = 1_700_000_000_000_000_000

    /// Records checkpoints, and stops the transfer once `stopAfter` bytes went by.
    final class RecordingObserver: TransferObserver {
        let stopAfter: Int
        let state = Mutex<(bytes: Int, checkpoints: [String])>((0, []))
        init(stopAfter: Int = .max) { self.stopAfter = stopAfter }
        func bytesTransferred(_ count: Int) -> Duration {
            state.withLock { $0.bytes += count }
            return .zero
        }
        var isCancelled: Bool { state.withLock { $0.bytes >= stopAfter } }
        func uploadCheckpoint(_ checkpoint: String) async { state.withLock { $0.checkpoints.append(checkpoint) } }
        var checkpoints: [String] { state.withLock { $0.checkpoints } }
    }

    func make(cipher: EncryptionSettings.Cipher = .auto) throws -> EncryptedBackend {
        let key = directory.child("key")
        if !FileManager.default.fileExists(atPath: key) { try MasterKey.generate(at: key) }
        return try EncryptedBackend(wrapping: LocalBackend(root: directory.child("remote")),
                                    settings: EncryptionSettings(key: .keyFile(key), names: .encrypted, cipher: cipher),
                                    remoteName: "vault")
    }

    func source(_ size: Int) throws -> (path: String, bytes: [UInt8]) {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
        let path = directory.child("VID.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try LocalFileSystem.setModificationTime(path, nanos: Self.modified)
        return (path, bytes)
    }

    func request(_ path: String, size: Int, mayResume: Bool, resumeState: String?) throws -> UploadRequest {
        UploadRequest(source: path, destination: try RelativePath("VID.mp4"), size: Int64(size), modifiedNanos: Self.modified,
                      mayResume: mayResume, resumeState: resumeState)
    }

    func fetched(_ backend: EncryptedBackend) async throws -> [UInt8] {
        let entry = try #require(try await backend.stat(try RelativePath("VID.mp4")))
        let partial = directory.child("fetched-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        _ = try await backend.download(DownloadRequest(source: entry.path, partialFile: partial, offset: 0, expected: entry),
                                       observer: NullTransferObserver())
        return Array(try Data(contentsOf: URL(fileURLWithPath: partial)))
    }

    /// An upload stopped after about `bytes` bytes; returns its checkpoint.
    func interruptedUpload(_ backend: EncryptedBackend, _ path: String, size: Int, after bytes: Int) async throws -> String {
        let stopping = RecordingObserver(stopAfter: bytes)
        let error = await #expect(throws: BackendError.self) {
            _ = try await backend.upload(try request(path, size: size, mayResume: false, resumeState: nil), observer: stopping)
        }
        #expect(error?.code == .cancelled)
        return try #require(stopping.checkpoints.last)
    }

    /// The cipher setting changed between the attempts in the second and third cases: the
    /// continued upload keeps the cipher its header names, or the file would mix two.
    @Test("an interrupted upload of the same version continues with its header, after the bytes it wrote",
          arguments: [(EncryptionSettings.Cipher.auto, EncryptionSettings.Cipher.auto),
                      (.chaCha20Poly1305, .aes256GCM), (.aes256GCM, .chaCha20Poly1305)])
    func continuesTheSameVersion(first: EncryptionSettings.Cipher, then: EncryptionSettings.Cipher) async throws {
        let size = 5 << 20
        let (path, bytes) = try source(size)
        let checkpoint = try await interruptedUpload(try make(cipher: first), path, size: size, after: 2 << 20)
        let header = try #require(EncryptedUploadCheckpoint.decode(checkpoint)?.headerBytes)
        #expect(ContentFormat.cipher(ofHeader: header) == first.contentCipher)

        let backend = try make(cipher: then)
        let resumed = RecordingObserver()
        let result = try await backend.upload(try request(path, size: size, mayResume: true, resumeState: checkpoint), observer: resumed)
        #expect(result.resumedFrom == ContentFormat.plaintextOffset(storedOffset: 2 << 20), "resumed from \(result.resumedFrom)")
        #expect(result.resumedFrom + result.bytesSent == Int64(size))
        #expect(resumed.checkpoints.isEmpty, "the continued upload keeps the recorded header")
        #expect(try await fetched(backend) == bytes)
    }

    @Test("without the core's word that the version is the same, an upload starts afresh with a new header")
    func anotherVersionStartsAfresh() async throws {
        let backend = try make()
        let size = 3 << 20
        let (path, bytes) = try source(size)
        let checkpoint = try await interruptedUpload(backend, path, size: size, after: 1 << 20)
        let fresh = RecordingObserver()
        let result = try await backend.upload(try request(path, size: size, mayResume: false, resumeState: checkpoint), observer: fresh)
        #expect(result.resumedFrom == 0)
        let recorded = try #require(fresh.checkpoints.first.flatMap(EncryptedUploadCheckpoint.decode))
        #expect(recorded.header != EncryptedUploadCheckpoint.decode(checkpoint)?.header)
        #expect(try await fetched(backend) == bytes)
    }

    @Test("a partial upload that does not end as the content would is not continued")
    func aForeignPartialIsNotContinued() async throws {
        let backend = try make()
        let size = 3 << 20
        let (path, bytes) = try source(size)
        _ = try await interruptedUpload(backend, path, size: size, after: 1 << 20)
        // A checkpoint with another header: its bytes are not what the partial file holds.
        var other = EncryptedUploadCheckpoint(header: SegmentCipher(keys: try await backend.unlock.keys(), cipher: .fastest,
                                                                       storedPath: "x").header, inner: nil)
        other.inner = nil
        let result = try await backend.upload(try request(path, size: size, mayResume: true, resumeState: other.encoded),
                                              observer: RecordingObserver())
        #expect(result.resumedFrom == 0)
        #expect(try await fetched(backend) == bytes)
    }

    @Test func startDecisions() throws {
        let header = ContentFormat.header(version: .init(cipher: .aes256GCM, bindsPath: true), noncePrefix: [1, 2, 3, 4, 5, 6, 7], salt: Array(repeating: 9, count: 16))
        let checkpoint = EncryptedUploadCheckpoint(header: header, inner: "s3-upload-id").encoded
        let request = { (mayResume: Bool, state: String?) in
            UploadRequest(source: "/x", destination: try RelativePath("x"), size: 1, modifiedNanos: 0, mayResume: mayResume, resumeState: state)
        }
        let continuing = EncryptedUploadStart(try request(true, checkpoint), innerResumes: true)
        #expect(continuing.header == header && continuing.innerState == "s3-upload-id")
        let notResumable = EncryptedUploadStart(try request(true, checkpoint), innerResumes: false)
        #expect(notResumable.header == nil && notResumable.innerState == "s3-upload-id")
        let changed = EncryptedUploadStart(try request(false, checkpoint), innerResumes: true)
        #expect(changed.header == nil && changed.innerState == "s3-upload-id")
        // A plaintext upload's checkpoint (before the remote was encrypted) is not one.
        let foreign = EncryptedUploadStart(try request(true, "{\"uploadId\":\"abc\"}"), innerResumes: true)
        #expect(foreign.header == nil && foreign.innerState == nil)
        var damaged = EncryptedUploadCheckpoint(header: header, inner: nil)
        damaged.header = "00ff"
        #expect(EncryptedUploadStart(try request(true, damaged.encoded), innerResumes: true).header == nil)
        #expect(ContentFormat.plaintextOffset(storedOffset: 0) == 0)
        #expect(ContentFormat.plaintextOffset(storedOffset: 32 + 65_552 + 10) == 65_536 + 10)
        #expect(ContentFormat.plaintextOffset(storedOffset: 32 + 65_540) == 65_536)
    }
}
