import Testing

@testable import S3Backend

@Suite("S3 ETags")
struct ETagTests {
    @Test("quoted or not, with blanks around, an ETag normalizes to one quoted form", arguments: [
        "9e107d9d372bb6826bd81d3542a419d6", "\"9e107d9d372bb6826bd81d3542a419d6\"", " \"9e107d9d372bb6826bd81d3542a419d6\"\t",
    ])
    func normalized(_ text: String) {
        #expect(ETag.normalized(text) == "\"9e107d9d372bb6826bd81d3542a419d6\"")
    }

    @Test("only a single-part ETag is an MD5")
    func md5() {
        #expect(ETag.md5Hex("\"9E107D9D372BB6826BD81D3542A419D6\"") == "9e107d9d372bb6826bd81d3542a419d6")
        #expect(ETag.md5Hex("\"9e107d9d372bb6826bd81d3542a419d6-3\"") == nil)
        #expect(ETag.md5Hex("\"\"") == nil)
        #expect(ETag.normalized("") == "\"\"")
        #expect(ETag.normalized("\"é\"") == "\"é\"")
    }
}
