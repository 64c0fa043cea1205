import Testing
@testable import FerryCore
import FerryPluginAPI

@Suite("Quantity")
struct QuantityTests {
    static let kibibyte: Int64 = 1024
    static let mebibyte: Int64 = 1 << 20
    static let gibibyte: Int64 = 1 << 30
    static let tebibyte: Int64 = 1 << 40

    static let byteCases: [(String, Int64)] = [
        ("0", 0),
        ("1", 1),
        ("512", 512),
        ("100b", 100),
        ("100B", 100),
        ("1k", kibibyte),
        ("1K", kibibyte),
        ("512k", 512 * kibibyte),
        ("1kb", kibibyte),
        ("1KiB", kibibyte),
        ("1.5k", 1536),
        ("4M", 4 * mebibyte),
        ("4MiB", 4 * mebibyte),
        ("4 MiB", 4 * mebibyte),
        ("4mb", 4 * mebibyte),
        ("10M", 10 * mebibyte),
        ("0.5M", 512 * kibibyte),
        ("1G", gibibyte),
        ("1GiB", gibibyte),
        ("2gb", 2 * gibibyte),
        ("2T", 2 * tebibyte),
        ("1TiB", tebibyte),
        ("  7  ", 7),
        ("\t3k", 3 * kibibyte),
        ("8000000T", 8_000_000 * tebibyte),
    ]

    @Test("sizes in bytes", arguments: byteCases)
    func bytes(text: String, expected: Int64) {
        #expect(Quantity.bytes(text) == expected)
    }

    @Test("invalid sizes give nil", arguments: [
        "", " ", "abc", "k", "MiB", "-1", "-1k", "1x", "1 KB B", "1.2.3", "1e3", "1,5k", "9000000T", "1P", "1ki",
        "nan", "inf", "½", "1 k b", "0x10",
    ])
    func invalidBytes(text: String) {
        #expect(Quantity.bytes(text) == nil)
    }

    static let durationCases: [(String, Duration)] = [
        ("0", .zero),
        ("10", .seconds(10)),
        ("500ms", .milliseconds(500)),
        ("30s", .seconds(30)),
        ("30 s", .seconds(30)),
        ("3sec", .seconds(3)),
        ("1.5s", .milliseconds(1500)),
        ("5m", .seconds(300)),
        ("2min", .seconds(120)),
        ("4h", .seconds(4 * 3600)),
        ("1d", .seconds(86_400)),
        ("0.5h", .seconds(1800)),
        ("30S", .seconds(30)),
        ("4H", .seconds(4 * 3600)),
        (" 2m ", .seconds(120)),
    ]

    @Test("durations", arguments: durationCases)
    func durations(text: String, expected: Duration) {
        #expect(Quantity.duration(text) == expected)
    }

    @Test("invalid durations give nil", arguments: [
        "", " ", "s", "ms", "-1s", "5x", "1w", "5 mins", "1y", "1.2.3s", "1e3s", "1,5s", "nan", "inf", "h4",
        "999999999999d",
    ])
    func invalidDurations(text: String) {
        #expect(Quantity.duration(text) == nil)
    }
}
