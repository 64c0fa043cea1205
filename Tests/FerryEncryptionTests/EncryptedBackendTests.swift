@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Testing

/// `EncryptedBackend` over a local folder: what the core sees is plaintext, what the folder
/// holds is not; wrong keys, altered files and foreign names.
@Suite struct EncryptedBackendTests {
    let directory = TemporaryDirectory("ferry-encryption-test")
    var remote: String { directory.child("remote") }

    func keyFile(_ name: String = "key") throws -> String {
        let path = directory.child(name)
        try MasterKey.generate(at: path)
        return path
    }

    func backend(_ key: EncryptionSettings.KeySource, names: EncryptionSettings.Names = .encrypted,
                 environment: [String: String] = [:]) throws -> EncryptedBackend {
        try EncryptedBackend(wrapping: LocalBackend(root: remote), settings: EncryptionSettings(key: key, names: names),
                             remoteName: "vault", environment: environment)
    }

    func send(_ backend: EncryptedBackend, _ path: String, _ bytes: [UInt8], modified: Int64 = 1_700_000_000_000_000_000) async throws {
        let source = directory.child("source-\(UUID().uuidString)")
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        try LocalFileSystem.setModificationTime(source, nanos: modified)
        _ = try await backend.upload(UploadRequest(source: source, destination: try RelativePath(path), size: Int64(bytes.count),
                                                   modifiedNanos: modified, mayResume: false), observer: NullTransferObserver())
    }

    func fetch(_ backend: EncryptedBackend, _ path: String) async throws -> (DownloadResult, [UInt8]) {
        let remotePath = try RelativePath(path)
        let entry = try #require(try await backend.stat(remotePath))
        let partial = directory.child("partial-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: partial) }
        do {
            let result = try await backend.download(DownloadRequest(source: remotePath, partialFile: partial, offset: 0, expected: entry),
                                                    observer: NullTransferObserver())
            return (result, Array(try Data(contentsOf: URL(fileURLWithPath: partial))))
        } catch {
            #expect(try Data(contentsOf: URL(fileURLWithPath: partial)).isEmpty, "the partial file kept unchecked bytes")
            throw error
        }
    }

    /// Every file below the remote folder, as stored.
    func storedFiles() throws -> [String] {
        (FileManager.default.enumerator(atPath: remote)?.allObjects as? [String] ?? [])
            .filter { !((try? FileManager.default.attributesOfItem(atPath: remote + "/" + $0)[.type] as? FileAttributeType) == .typeDirectory) }
            .sorted()
    }

    @Test func roundTripWithEncryptedNamesPlaintextSizesAndTimes() async throws {
        let backend = try backend(.keyFile(try keyFile()))
        let secret = Array("a secret holiday photo ".utf8) + (0..<200_000).map { UInt8($0 % 256) }
        try await send(backend, "DCIM/2024/IMG_0001.jpg", secret, modified: 1_650_000_000_123_000_000)
        try await send(backend, "empty.txt", [])

        let stored = try storedFiles()
        #expect(stored.contains(RemoteKeyHeader.objectName))
        #expect(stored.count == 3)
        for name in stored {
            #expect(!name.contains("DCIM") && !name.contains("IMG") && !name.contains("empty"), "\(name)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: remote + "/" + name))
            #expect(bytes.range(of: Data("a secret holiday".utf8)) == nil)
        }

        let root = try await backend.list(.root)
        #expect(root.map(\.path.string).sorted() == ["DCIM", "empty.txt"])
        #expect(root.first { $0.path.string == "empty.txt" }?.size == 0)
        let photos = try await backend.listTree(.root)
        let photo = try #require(photos.first { $0.path.string == "DCIM/2024/IMG_0001.jpg" })
        #expect(photo.size == Int64(secret.count))
        #expect(photo.modifiedNanos == 1_650_000_000_123_000_000)

        let (result, bytes) = try await fetch(backend, "DCIM/2024/IMG_0001.jpg")
        #expect(bytes == secret)
        #expect(result.entry.size == Int64(secret.count))
        #expect(try await fetch(backend, "empty.txt").1.isEmpty)

        try await backend.move(from: try RelativePath("empty.txt"), to: try RelativePath("DCIM/renamed.txt"), overwrite: false)
        #expect(try await backend.stat(try RelativePath("DCIM/renamed.txt"))?.size == 0)
        try await backend.delete(try RelativePath("DCIM/renamed.txt"))
        #expect(try await backend.stat(try RelativePath("DCIM/renamed.txt")) == nil)
    }

    @Test func readingANewRemoteWritesNothingAndTheFirstWriteAddsTheHeader() async throws {
        let backend = try backend(.passphraseEnvironment("PASS"), environment: ["PASS": "pw"])
        #expect(try await backend.listTree(.root).isEmpty)
        #expect(try await backend.stat(try RelativePath("a.jpg")) == nil)
        #expect(!FileManager.default.fileExists(atPath: remote))
        try await send(backend, "a.jpg", [1, 2])
        #expect(try storedFiles().contains(RemoteKeyHeader.objectName))
        let again = try self.backend(.passphraseEnvironment("PASS"), environment: ["PASS": "pw"])
        #expect(try await fetch(again, "a.jpg").1 == [1, 2])
    }

    @Test func aWrongKeyIsRefusedBeforeAnythingIsRead() async throws {
        let right = try backend(.keyFile(try keyFile()))
        try await send(right, "a.jpg", [1, 2, 3])
        let before = try storedFiles()
        let wrong = try backend(.keyFile(try keyFile("other")))
        let error = await #expect(throws: BackendError.self) { try await wrong.list(.root) }
        #expect(error?.code == .authenticationFailed)
        #expect(error?.message.contains("wrong key or passphrase") == true)
        #expect(try storedFiles() == before)
        let passphrase = try backend(.passphraseEnvironment("PASS"), environment: ["PASS": "x"])
        #expect(await #expect(throws: BackendError.self) { try await passphrase.list(.root) }?.code == .authenticationFailed)
    }

    @Test func aPassphraseRemoteKeepsItsScryptParametersInItsHeader() async throws {
        let first = try backend(.passphraseEnvironment("PASS"), environment: ["PASS": "correct horse"])
        try await send(first, "a.jpg", [9, 9, 9])
        let header = try #require(RemoteKeyHeader.decode(Array(try Data(contentsOf: URL(fileURLWithPath: remote + "/.ferry-encryption")))))
        #expect(header.kdf == .scrypt && header.scrypt?.n == 1 << 15)
        let again = try backend(.passphraseEnvironment("PASS"), environment: ["PASS": "correct horse"])
        #expect(try await fetch(again, "a.jpg").1 == [9, 9, 9])
        let wrong = try backend(.passphraseEnvironment("PASS"), environment: ["PASS": "battery staple"])
        #expect(await #expect(throws: BackendError.self) { try await wrong.list(.root) }?.code == .authenticationFailed)
        let unset = try backend(.passphraseEnvironment("PASS"))
        #expect(await #expect(throws: BackendError.self) { try await unset.list(.root) }?.message.contains("not set") == true)
    }

    @Test(arguments: ["flip", "truncate", "swap"])
    func anAlteredFileFailsAuthentication(alteration: String) async throws {
        let backend = try backend(.keyFile(try keyFile()))
        let content = (0..<150_000).map { UInt8($0 % 199) }
        try await send(backend, "a.bin", content)
        try await send(backend, "b.bin", content.reversed())
        let names = NameCipher(keys: try await backend.unlock.keys())
        let a = remote + "/" + (try names.encrypt("a.bin")), b = remote + "/" + (try names.encrypt("b.bin"))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: a)))
        switch alteration {
        case "flip": bytes[70_000] ^= 1
        case "truncate": bytes.removeLast(ContentFormat.segmentSize + ContentFormat.tagSize)
        default:
            // The second segment of another file with the same key, spliced in.
            let other = Array(try Data(contentsOf: URL(fileURLWithPath: b)))
            let start = ContentFormat.headerSize + ContentFormat.segmentSize + ContentFormat.tagSize
            bytes.replaceSubrange(start..<(start + 1000), with: other[start..<(start + 1000)])
        }
        try Data(bytes).write(to: URL(fileURLWithPath: a))
        let error = await #expect(throws: BackendError.self) { _ = try await fetch(backend, "a.bin") }
        #expect(error?.message.contains("authentication failed") == true, "\(String(describing: error))")
        #expect(error?.isRetryable == false)
    }

    @Test("two whole files swapped between their names both fail to authenticate, naming the file",
          arguments: [EncryptionSettings.Names.encrypted, .plain])
    func swappedFilesFailAuthentication(names: EncryptionSettings.Names) async throws {
        let backend = try backend(.keyFile(try keyFile()), names: names)
        // Same size, so a listing shows nothing amiss.
        try await send(backend, "2024/a.jpg", (0..<150_000).map { UInt8($0 % 199) })
        try await send(backend, "2024/b.jpg", (0..<150_000).map { UInt8($0 % 101) })
        let stored = try storedFiles().filter { !$0.hasSuffix(RemoteKeyHeader.objectName) }
        #expect(stored.count == 2)
        let first = remote + "/" + stored[0], second = remote + "/" + stored[1]
        try FileManager.default.moveItem(atPath: first, toPath: first + ".swap")
        try FileManager.default.moveItem(atPath: second, toPath: first)
        try FileManager.default.moveItem(atPath: first + ".swap", toPath: second)
        for path in ["2024/a.jpg", "2024/b.jpg"] {
            let error = await #expect(throws: BackendError.self) { _ = try await fetch(backend, path) }
            #expect(error?.message.contains("authentication failed") == true, "\(String(describing: error))")
            #expect(error?.message.contains("moved here from another name") == true, "\(String(describing: error))")
            #expect(error?.description.contains(path) == true && error?.description.contains("\n") == false)
            #expect(error?.isRetryable == false)
        }
    }

    @Test("a file written before paths were bound (version 1 or 2) still decrypts, and a move seals it for its new name",
          arguments: ContentCipher.allCases)
    func filesOfTheOldFormatStillRead(cipher: ContentCipher) async throws {
        let backend = try backend(.keyFile(try keyFile()))
        try await send(backend, "new.jpg", [1])
        let keys = try await backend.unlock.keys()
        // What the code before path binding wrote: segments authenticate the header only.
        let old = SegmentCipher(keys: keys, cipher: cipher, noncePrefix: Array(repeating: 3, count: 7),
                                salt: Array(repeating: 4, count: 16), storedPath: nil)
        #expect(ContentFormat.version(ofHeader: old.header) == .init(cipher: cipher, bindsPath: false))
        let plaintext = (0..<100_000).map { UInt8($0 % 253) }
        var stored = Data(old.header)
        stored += try old.seal(plaintext[0..<65_536], index: 0, isLast: false)
        stored += try old.seal(plaintext[65_536...], index: 1, isLast: true)
        let storedName = try NameCipher(keys: keys).encrypt("old.jpg")
        try stored.write(to: URL(fileURLWithPath: remote + "/" + storedName))
        #expect(try await fetch(backend, "old.jpg").1 == plaintext)

        // Ferry's own move seals it again for the new name (the newest version): it reads there.
        try await backend.move(from: try RelativePath("old.jpg"), to: try RelativePath("moved/old.jpg"), overwrite: false)
        #expect(try await fetch(backend, "moved/old.jpg").1 == plaintext)
        #expect(try await backend.stat(try RelativePath("old.jpg")) == nil)
        let movedName = try NameCipher(keys: keys).encrypt("moved") + "/" + storedName
        let header = Array(try Data(contentsOf: URL(fileURLWithPath: remote + "/" + movedName)).prefix(ContentFormat.headerSize))
        #expect(ContentFormat.version(ofHeader: header) == .init(cipher: cipher, bindsPath: true))
    }

    @Test func foreignNamesAreSkippedAndPlainNamesStayPlain() async throws {
        let backend = try backend(.keyFile(try keyFile()))
        try await send(backend, "a.jpg", [1])
        try Data("hello".utf8).write(to: URL(fileURLWithPath: remote + "/README.txt"))
        #expect(try await backend.list(.root).map(\.path.string) == ["a.jpg"])

        let plainRemote = try EncryptedBackend(wrapping: LocalBackend(root: directory.child("plain")),
                                               settings: EncryptionSettings(key: .keyFile(try keyFile("k2")), names: .plain),
                                               remoteName: "plain")
        try await send(plainRemote, "photos/IMG_1.jpg", [1, 2, 3])
        #expect(FileManager.default.fileExists(atPath: directory.child("plain/photos/IMG_1.jpg")))
        #expect(try await plainRemote.listTree(.root).map(\.path.string) == ["photos/IMG_1.jpg"])
        #expect(try await fetch(plainRemote, "photos/IMG_1.jpg").1 == [1, 2, 3])
    }

    @Test func keygenWritesAPrivateKeyAndNeverOverwrites() throws {
        let path = try keyFile()
        let meta = try #require(try LocalFileSystem.metadata(path))
        #expect(meta.permissions & 0o777 == 0o600)
        #expect(throws: SystemError.self) { try MasterKey.generate(at: path) }
        _ = try MasterKey.read(keyFile: path)
        chmod(path, 0o644)
        #expect(throws: BackendError.self) { try MasterKey.read(keyFile: path) }
    }
}
