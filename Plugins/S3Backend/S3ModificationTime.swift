import Foundation

/// The modification time kept in an object's `x-amz-meta-mtime`, written the way rclone
/// writes it: decimal seconds since 1970 with nine digits of fraction
/// ("1709633472.123456789"), so a bucket rclone filled keeps its times for Ferry, and
/// rclone reads Ferry's without a warning. Nanoseconds are kept exactly either way.
///
/// Reading also takes whole seconds ("1709633472"), fewer fraction digits, and the whole
/// nanoseconds earlier Ferry builds wrote ("1709633472123456789"): no seconds count for
/// the next millions of years reaches 10^14, and no nanoseconds count since 1973 is below.
enum S3ModificationTime {
    static let nanosPerSecond: Int64 = 1_000_000_000
    private static let wholeNanosFloor: Int64 = 100_000_000_000_000

    static func header(nanos: Int64) -> String {
        let magnitude = nanos.magnitude
        let seconds = magnitude / UInt64(nanosPerSecond)
        let fraction = String(magnitude % UInt64(nanosPerSecond))
        return (nanos < 0 ? "-" : "") + "\(seconds)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }

    /// Nanoseconds since 1970, or nil for anything else (then `Last-Modified` is used).
    static func nanos(header: String) -> Int64? {
        var text = Substring(header.trimmingCharacters(in: .whitespaces))
        let negative = text.first == "-"
        if negative || text.first == "+" { text = text.dropFirst() }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let wholeText = parts.first, !wholeText.isEmpty, wholeText.allSatisfy(\.isASCIIDigit),
              let whole = Int64(wholeText) else { return nil }
        var nanos: Int64
        if parts.count == 1 {
            guard whole < wholeNanosFloor else { return negative ? -whole : whole }
            let (scaled, overflow) = whole.multipliedReportingOverflow(by: nanosPerSecond)
            guard !overflow else { return nil }
            nanos = scaled
        } else {
            let fractionText = parts[1]
            guard !fractionText.isEmpty, fractionText.allSatisfy(\.isASCIIDigit) else { return nil }
            // Digits past the ninth are below a nanosecond: dropped, as a filesystem would.
            let digits = String(fractionText.prefix(9))
            let fraction = Int64(digits + String(repeating: "0", count: 9 - digits.count)) ?? 0
            let (scaled, overflow) = whole.multipliedReportingOverflow(by: nanosPerSecond)
            guard !overflow, case let (sum, false) = scaled.addingReportingOverflow(fraction) else { return nil }
            nanos = sum
        }
        return negative ? -nanos : nanos
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
