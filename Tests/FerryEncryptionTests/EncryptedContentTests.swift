@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// `EncryptedContent`: the encrypted form of a file, made as it is read, in any pieces.
@Suite struct EncryptedContentTests {
    let directory = TemporaryDirectory("ferry-encrypted-content")

    func keys() throws -> EncryptionKeys {
        let path = directory.child("key")
        if !FileManager.default.fileExists(atPath: path) { try MasterKey.generate(at: path) }
        return EncryptionKeys(master: try MasterKey.read(keyFile: path))
    }

    func source(_ size: Int) throws -> (path: String, meta: FileMetadata) {
        let path = directory.child("source-\(size)")
        try TreeGenerator.write(at: path, size: size, seed: UInt64(size), modified: 1_700_000_000)
        return (path, try #require(try LocalFileSystem.metadata(path)))
    }

    /// Reads `length` bytes from `offset` in pieces of `piece` bytes.
    func read(_ content: EncryptedContent, from offset: Int64, length: Int64, piece: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: piece)
        var position = offset
        while position < offset + length {
            let count = try content.read(into: &buffer, count: Int(min(Int64(piece), offset + length - position)), at: position)
            if count == 0 { break }
            result += buffer[0..<count]
            position += Int64(count)
        }
        return result
    }

    @Test("pieces of any size, and ranges read again, give one ciphertext that decrypts to the file",
          arguments: [0, 1, 65_535, 65_536, 65_537, 300_001], ContentCipher.allCases)
    func piecesMakeOneCiphertext(size: Int, cipher: ContentCipher) throws {
        let keys = try keys()
        let (path, meta) = try source(size)
        let content = EncryptedContent(source: path, size: meta.size, modifiedNanos: meta.modifiedNanos, keys: keys, cipher: cipher,
                                       storedPath: "stored/file")
        #expect(ContentFormat.cipher(ofHeader: content.header) == cipher)
        #expect(content.size == ContentFormat.ciphertextSize(plaintextSize: Int64(size)))
        let whole = try read(content, from: 0, length: content.size, piece: 1 << 20)
        #expect(Int64(whole.count) == content.size)
        for piece in [1, 17, 16_384, 65_552] {
            #expect(try read(content, from: 0, length: content.size, piece: piece) == whole, "pieces of \(piece)")
        }
        // A resent request or a ranged PUT reads a range again, after later ones.
        let middle = content.size / 3
        #expect(try read(content, from: middle, length: content.size - middle, piece: 4096) == Array(whole[Int(middle)...]))
        #expect(try read(content, from: 0, length: middle, piece: 999) == Array(whole[0..<Int(middle)]))
        try content.verifySource()

        let stored = directory.child("stored-\(size)-\(cipher)")
        try Data(whole).write(to: URL(fileURLWithPath: stored))
        let plain = directory.child("plain-\(size)-\(cipher)")
        _ = FileManager.default.createFile(atPath: plain, contents: nil)
        let restored = try ContentStream.decrypt(try OpenFile(stored, mode: .read), cipherSize: content.size,
                                                 into: try OpenFile(plain, mode: .writeExisting), keys: keys,
                                                 storedPath: "stored/file", path: stored,
                                                 observer: NullTransferObserver())
        #expect(restored == Int64(size))
        #expect(try TreeComparison.sameContent(path, plain))
    }

    @Test("a source changed before the first read, or while it is read, is changedDuringTransfer")
    func changedSource() throws {
        let keys = try keys()
        let (path, meta) = try source(200_000)
        let stale = EncryptedContent(source: path, size: meta.size, modifiedNanos: meta.modifiedNanos - 1, keys: keys, cipher: .fastest,
                                     storedPath: "stored/file")
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect(throws: BackendError.self) { _ = try stale.read(into: &buffer, count: 100, at: 40) }

        let content = EncryptedContent(source: path, size: meta.size, modifiedNanos: meta.modifiedNanos, keys: keys, cipher: .fastest,
                                     storedPath: "stored/file")
        _ = try content.read(into: &buffer, count: 100, at: 0)
        try LocalFileSystem.setModificationTime(path, nanos: meta.modifiedNanos + 1_000_000_000)
        do {
            try content.verifySource()
            Issue.record("a changed source passed")
        } catch {
            #expect(error.code == .changedDuringTransfer)
        }
    }
}
