import Crypto
@testable import FerryEncryption
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@Suite struct ContentFormatTests {
    static let master: [UInt8] = Array(0..<32)
    static let prefix: [UInt8] = [0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6]
    static let salt: [UInt8] = Array(0xb0...0xbf)
    static let document: String = {
        (try? String(contentsOfFile: TestServer.repositoryRoot + "/docs/encryption.md", encoding: .utf8)) ?? ""
    }()

    @Test(arguments: [0, 1, 5, 65_535, 65_536, 65_537, 131_072, 131_073, 1 << 30] as [Int64])
    func plaintextSizeComesBackFromTheStoredSize(size: Int64) {
        let stored = ContentFormat.ciphertextSize(plaintextSize: size)
        #expect(ContentFormat.plaintextSize(ciphertextSize: stored) == size)
    }

    @Test(arguments: [0, 31, 32, 47, 32 + 65_552 + 1, 32 + 65_552 + 16] as [Int64])
    func sizesNoFileHasAreRefused(size: Int64) {
        #expect(ContentFormat.plaintextSize(ciphertextSize: size) == nil)
    }

    /// The stored path the vectors of versions 3 and 4 are bound to (`IMG_0001.jpg`'s stored name).
    static let vectorPath = "keltqb7iadxeqf4k4ot3qiusregv7izrdsd37qmrhcjos"

    /// The vectors of docs/encryption.md, computed by Tests/encryption/decode.py (the
    /// Python `cryptography` package), reproduced by Ferry's code: version 1
    /// (ChaCha20-Poly1305) and 2 (AES-256-GCM), written before paths were bound, and 3 and
    /// 4, the same ciphers bound to `vectorPath`.
    @Test(arguments: [
        (ContentCipher.chaCha20Poly1305, false, "",
         "4645525259454e4301a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebfb66d5643dd3eaddd1cc139cce557851d"),
        (.chaCha20Poly1305, false, "Ferry",
         "4645525259454e4301a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebf9a83d57605a7fcd0ac08b128dc269669a6a9038779"),
        (.aes256GCM, false, "",
         "4645525259454e4302a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc694206b8ffcc8e98421b76aecc48246"),
        (.aes256GCM, false, "Ferry",
         "4645525259454e4302a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebfa40b1c1f3f552580b96f204438ff46e86905138850"),
        (.chaCha20Poly1305, true, "",
         "4645525259454e4303a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebfa376ecd3ed4e8f4dd88b3cea03ad2d3c"),
        (.chaCha20Poly1305, true, "Ferry",
         "4645525259454e4303a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebf9a83d576058437eba5a33002e5c3306062b1492351"),
        (.aes256GCM, true, "",
         "4645525259454e4304a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebf331ca3fd0629b0f0ab71bb2309332b2e"),
        (.aes256GCM, true, "Ferry",
         "4645525259454e4304a0a1a2a3a4a5a6b0b1b2b3b4b5b6b7b8b9babbbcbdbebfa40b1c1f3f9e436cb9529a3d9ddb05baec88073077"),
    ])
    func smallVectors(cipher: ContentCipher, bound: Bool, plaintext: String, expected: String) throws {
        let path = bound ? Self.vectorPath : nil
        let sealed = try Self.encrypt(Array(plaintext.utf8), cipher: cipher, storedPath: path)
        #expect(Hex.encode(sealed) == expected)
        #expect(Self.document.contains(expected), "docs/encryption.md does not show this vector")
        #expect(try Self.decrypt(sealed, storedPath: Self.vectorPath) == Array(plaintext.utf8))
    }

    @Test("a file bound to its stored path fails under another; one written before paths were bound reads anywhere",
          arguments: ContentCipher.allCases)
    func pathBinding(cipher: ContentCipher) throws {
        let bound = try Self.encrypt(Array("Ferry".utf8), cipher: cipher, storedPath: "a/IMG_1.jpg")
        #expect(try Self.decrypt(bound, storedPath: "a/IMG_1.jpg") == Array("Ferry".utf8))
        let error = #expect(throws: BackendError.self) { try Self.decrypt(bound, storedPath: "a/IMG_2.jpg") }
        #expect(error.map(EncryptionFailure.isAuthentication) == true)
        #expect(error?.message.contains("moved here from another name") == true)
        let old = try Self.encrypt(Array("Ferry".utf8), cipher: cipher, storedPath: nil)
        #expect(try Self.decrypt(old, storedPath: "anywhere/else.jpg") == Array("Ferry".utf8))
    }

    @Test(arguments: [
        (ContentCipher.chaCha20Poly1305, false, "8f6ce6db2224122a41e06347951b2b87627d5be9b6f5633486c5453431533c1d",
         "4bb0ecd2a38e953bdaec84f97b962e176e719a059c4b2c5ef4fd1dcdd1e06db4"),
        (.aes256GCM, false, "477d9443f1a57e4d248ac21be774dd3b1cf3fab69f3d886b3bb94cbb2c8cf288",
         "21706f7bc620f7206cfb0f6bc83c04ee28749f81b7dd344389abcebf33ba0da5"),
        (.chaCha20Poly1305, true, "abff41c2bd90ad471c238c9398fc3cbb19ce3dd7d7780c43067336110573a8ec",
         "7d9b277ac4aa04113d8d721d80962e1783ffad0bbcde647aaab811bdfb785045"),
        (.aes256GCM, true, "24bd4f4eea212fe236a78a6fbaa8bebb9ecc8bc2f7361f093bb06e221af065dc",
         "0549be10196f1b8dd81d5b1e623c04eee31273818a674de6ade89c3abeaeb582"),
    ])
    func twoSegmentVector(cipher: ContentCipher, bound: Bool, digest expected: String, last: String) throws {
        let plaintext = (0..<(65_536 + 3)).map { UInt8($0 % 251) }
        let sealed = try Self.encrypt(plaintext, cipher: cipher, storedPath: bound ? Self.vectorPath : nil)
        let digest = Hex.encode(Array(SHA256.hash(data: sealed)))
        #expect(digest == expected)
        #expect(Hex.encode(Array(sealed.suffix(32))) == last)
        #expect(Self.document.contains(digest))
        #expect(try Self.decrypt(sealed, storedPath: Self.vectorPath) == plaintext)
    }

    @Test("a header of an unknown version, or not of this format, names no cipher")
    func unknownVersionsAreRefused() {
        var header = ContentFormat.header(version: .init(cipher: .aes256GCM, bindsPath: false), noncePrefix: Self.prefix,
                                          salt: Self.salt)
        #expect(ContentFormat.cipher(ofHeader: header) == .aes256GCM)
        header[ContentFormat.magic.count] = 3
        #expect(ContentFormat.version(ofHeader: header) == .init(cipher: .chaCha20Poly1305, bindsPath: true))
        for version: UInt8 in [0, 5, 0xFF] {
            header[ContentFormat.magic.count] = version
            #expect(ContentFormat.cipher(ofHeader: header) == nil)
            #expect(SegmentCipher(keys: EncryptionKeys(master: Self.master), header: header, storedPath: "a") == nil)
        }
        #expect(ContentFormat.cipher(ofHeader: Array(header.prefix(31))) == nil)
    }

    @Test func keyCheckAndNameVectors() throws {
        let keys = EncryptionKeys(master: Self.master)
        #expect(Hex.encode(keys.check) == "a755b2a7511909dd6bf2db30bcd7c995c085b3a0fede25b8bb3e8c2820da396b")
        let names = NameCipher(keys: keys)
        for (name, stored) in [("IMG_0001.jpg", "keltqb7iadxeqf4k4ot3qiusregv7izrdsd37qmrhcjos"),
                               (".thumbnails", "jerukxq2dlk65iyjcsxvqasakonbikshsam22qe7sv5q")] {
            #expect(try names.encrypt(name) == stored)
            #expect(names.decrypt(stored) == name)
            #expect(Self.document.contains(stored))
        }
        #expect(Self.document.contains(Hex.encode(keys.check)))
    }

    @Test(arguments: ContentCipher.allCases)
    func segmentsOutOfPlaceFailToAuthenticate(algorithm: ContentCipher) throws {
        let keys = EncryptionKeys(master: Self.master)
        let cipher = SegmentCipher(keys: keys, cipher: algorithm, noncePrefix: Self.prefix, salt: Self.salt, storedPath: "a")
        let first = try cipher.seal(Data(repeating: 1, count: 10), index: 0, isLast: false)
        #expect(throws: BackendError.self) { try cipher.open(first, index: 1, isLast: false) }
        #expect(throws: BackendError.self) { try cipher.open(first, index: 0, isLast: true) }
        let other = SegmentCipher(keys: keys, cipher: algorithm, noncePrefix: Self.prefix, salt: Array(repeating: 0, count: 16),
                                  storedPath: "a")
        let otherCipher = SegmentCipher(keys: keys, cipher: algorithm == .aes256GCM ? .chaCha20Poly1305 : .aes256GCM,
                                        noncePrefix: Self.prefix, salt: Self.salt, storedPath: "a")
        #expect(throws: BackendError.self) { try otherCipher.open(first, index: 0, isLast: false) }
        #expect(throws: BackendError.self) { try other.open(first, index: 0, isLast: false) }
        #expect(try cipher.open(first, index: 0, isLast: false) == Data(repeating: 1, count: 10))
    }

    @Test func namesRoundTripAndTooLongNamesAreRefused() throws {
        let names = NameCipher(keys: EncryptionKeys(master: Self.master))
        let longest = String(repeating: "é", count: NameCipher.maxNameBytes / 2)
        let stored = try names.encrypt(longest)
        #expect(stored.utf8.count <= NameCipher.maxStoredLength)
        #expect(stored.allSatisfy { $0.isLowercase || ("2"..."7").contains($0) })
        #expect(names.decrypt(stored) == longest)
        let error = #expect(throws: BackendError.self) { try names.encrypt(String(repeating: "a", count: NameCipher.maxNameBytes + 1)) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("too long") == true)
        #expect(names.decrypt("not-base32!") == nil)
        #expect(names.decrypt(Base32.encode(Array(repeating: 7, count: 20))) == nil)
    }

    @Test(arguments: [[UInt8](), [0], [1, 2, 3, 4, 5], Array(0...255)])
    func base32RoundTrips(bytes: [UInt8]) {
        #expect(Base32.decode(Base32.encode(bytes)) == bytes)
    }

    /// `storedPath` nil: the version that binds no path (1 or 2), as files written before.
    static func encrypt(_ plaintext: [UInt8], cipher algorithm: ContentCipher, storedPath: String?) throws -> [UInt8] {
        let cipher = SegmentCipher(keys: EncryptionKeys(master: master), cipher: algorithm, noncePrefix: prefix, salt: salt,
                                   storedPath: storedPath)
        var output = cipher.header
        let count = ContentFormat.segmentCount(plaintextSize: Int64(plaintext.count))
        for index in 0..<Int(count) {
            let start = index * ContentFormat.segmentSize
            let end = min(plaintext.count, start + ContentFormat.segmentSize)
            output += try cipher.seal(plaintext[start..<end], index: UInt32(index), isLast: index == Int(count) - 1)
        }
        return output
    }

    /// `sealed`, read at `storedPath`, opened segment by segment with the cipher its header names.
    static func decrypt(_ sealed: [UInt8], storedPath: String) throws -> [UInt8] {
        let header = Array(sealed.prefix(ContentFormat.headerSize))
        let cipher = try #require(SegmentCipher(keys: EncryptionKeys(master: master), header: header, storedPath: storedPath))
        let stride = ContentFormat.segmentSize + ContentFormat.tagSize
        let count = Int(ContentFormat.segmentCount(plaintextSize: try #require(ContentFormat.plaintextSize(ciphertextSize: Int64(sealed.count)))))
        var plaintext: [UInt8] = []
        for index in 0..<count {
            let start = ContentFormat.headerSize + index * stride
            let segment = Data(sealed[start..<min(sealed.count, start + stride)])
            plaintext += try cipher.open(segment, index: UInt32(index), isLast: index == count - 1)
        }
        return plaintext
    }
}
