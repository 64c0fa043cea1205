import Foundation

/// Parsing of human-written sizes ("4 MiB", "500k", "1G") and durations ("30s", "4h", "500ms").
public enum Quantity {
    /// Bytes from a size: a plain number, or a number with k/M/G/T (powers of 1024,
    /// with or without "i" and "B"), case-insensitive.
    public static func bytes(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let (number, unit) = split(trimmed)
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        let multiplier: Double
        switch unit {
        case "", "b": multiplier = 1
        case "k", "kb", "kib": multiplier = 1024
        case "m", "mb", "mib": multiplier = 1024 * 1024
        case "g", "gb", "gib": multiplier = 1024 * 1024 * 1024
        case "t", "tb", "tib": multiplier = 1024 * 1024 * 1024 * 1024
        default: return nil
        }
        let bytes = value * multiplier
        guard bytes < 9.0e18 else { return nil }
        return Int64(bytes.rounded())
    }

    /// A duration: a number with ms/s/m/h/d; a plain number means seconds.
    public static func duration(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let (number, unit) = split(trimmed)
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        let milliseconds: Double
        switch unit {
        case "ms": milliseconds = value
        case "", "s", "sec": milliseconds = value * 1000
        case "m", "min": milliseconds = value * 60_000
        case "h": milliseconds = value * 3_600_000
        case "d": milliseconds = value * 86_400_000
        default: return nil
        }
        guard milliseconds < 1e15 else { return nil }
        return .milliseconds(Int64(milliseconds.rounded()))
    }

    private static func split(_ text: String) -> (String, String) {
        let numberEnd = text.firstIndex { !($0.isNumber || $0 == ".") } ?? text.endIndex
        let number = String(text[..<numberEnd])
        let unit = text[numberEnd...].trimmingCharacters(in: .whitespaces)
        return (number, unit)
    }
}
