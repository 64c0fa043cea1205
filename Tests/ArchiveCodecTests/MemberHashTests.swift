import ArchiveCodec
import Testing

@Suite("SHA-256")
struct MemberHashTests {
    @Test("matches the FIPS 180-4 test vectors", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func vectors(_ input: String, _ expected: String) {
        #expect(MemberHash.hex(of: Array(input.utf8)) == expected)
    }

    @Test("fed in uneven pieces, gives the same digest as in one piece")
    func pieces() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var hash = MemberHash()
        var start = 0
        for size in [1, 63, 64, 65, 127, 1000, 3] + Array(repeating: 500, count: 20) where start < bytes.count {
            let end = min(bytes.count, start + size)
            hash.update(bytes[start..<end])
            start = end
        }
        hash.update(bytes[start...])
        #expect(hash.finalizeHex() == MemberHash.hex(of: bytes))
        // 1,000,000 × "a": the long FIPS vector, crossing many blocks.
        #expect(MemberHash.hex(of: [UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
