import Testing

@testable import S3Backend

@Suite("S3 modification time header")
struct S3ModificationTimeTests {
    @Test("written as seconds with nine decimals, and read back to the same nanosecond", arguments: [
        Int64(0), 1, 999_999_999, 1_000_000_000, 1_709_633_472_123_456_789, 1_709_633_472_000_000_000, -1, -1_500_000_000,
        Int64.max, Int64.min + 1,
    ])
    func roundTrip(_ nanos: Int64) {
        let header = S3ModificationTime.header(nanos: nanos)
        #expect(header.split(separator: ".").last?.count == 9)
        #expect(S3ModificationTime.nanos(header: header) == nanos)
    }

    @Test("known spellings")
    func spellings() {
        #expect(S3ModificationTime.header(nanos: 1_709_633_472_123_456_789) == "1709633472.123456789")
        #expect(S3ModificationTime.header(nanos: 5) == "0.000000005")
        #expect(S3ModificationTime.header(nanos: -1_500_000_000) == "-1.500000000")
        #expect(S3ModificationTime.nanos(header: "1709633472.1") == 1_709_633_472_100_000_000)
        #expect(S3ModificationTime.nanos(header: "1709633472.1234567891234") == 1_709_633_472_123_456_789)
        #expect(S3ModificationTime.nanos(header: " 1709633472 ") == 1_709_633_472_000_000_000)
        #expect(S3ModificationTime.nanos(header: "1709633472123456789") == 1_709_633_472_123_456_789)
        #expect(S3ModificationTime.nanos(header: "-0.5") == -500_000_000)
    }

    @Test("anything else is no time, so Last-Modified is used", arguments: [
        "", ".", "1.", ".5", "abc", "1.2.3", "1e9", "0x10", "--1", "1 2", "99999999999999999999", "9999999999999.5",
        "١٢٣",
    ])
    func rejected(_ header: String) {
        #expect(S3ModificationTime.nanos(header: header) == nil)
    }
}
