import FerryPluginAPI
import Foundation

/// Where a replaced version is saved on the remote, and how its name is read back.
///
/// A version of `DIR/NAME` replaced at a moment T is saved as
/// `.ferry-versions/DIR/NAME.YYYYMMDD-HHMMSS.mmmZ` under the folder's remote path, T in
/// UTC to the millisecond. The stamp has a fixed width, so names sort as times do; two
/// saves of one file in the same millisecond are kept apart by the name being taken only
/// while it is free (the next millisecond is tried).
public enum VersionName {
    public static let folderName = ".ferry-versions"

    /// The versions folder of a pair whose remote root is `remoteRoot`.
    public static func folder(root remoteRoot: RelativePath) -> RelativePath {
        (try? remoteRoot.appending(folderName)) ?? remoteRoot
    }

    /// The saved name of `path` (relative to the folder) replaced at `millis` since 1970.
    public static func savedPath(of path: RelativePath, replacedAtMillis millis: Int64, root: RelativePath) throws(BackendError) -> RelativePath {
        let base = folder(root: root).appending(path)
        guard let parent = base.parent else { throw BackendError(.invalidName, "no versions of the folder itself", path: path.string) }
        return try parent.appending(path.name + "." + stamp(millis))
    }

    /// `20261205-134455.123Z`.
    public static func stamp(_ millis: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(floorDiv(millis, 1000)))
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let fraction = millis - floorDiv(millis, 1000) * 1000
        return String(format: "%04d%02d%02d-%02d%02d%02d.%03dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                      parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, Int(fraction))
    }

    /// The file name and replacement time a saved name stands for; nil for any other name.
    public static func parse(_ savedName: String) -> (name: String, replacedAtMillis: Int64)? {
        let stampLength = 20  // YYYYMMDD-HHMMSS.mmmZ
        guard savedName.utf8.count > stampLength + 1 else { return nil }
        let stampText = String(savedName.suffix(stampLength))
        let name = String(savedName.dropLast(stampLength + 1))
        guard savedName.dropLast(stampLength).hasSuffix("."), let millis = millis(ofStamp: stampText) else { return nil }
        return (name, millis)
    }

    package static func millis(ofStamp text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[8] == UInt8(ascii: "-"), bytes[15] == UInt8(ascii: "."), bytes[19] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
              let minute = number(11..<13), let second = number(13..<15), let fraction = number(16..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let components = DateComponents(timeZone: TimeZone(identifier: "UTC"), year: year, month: month, day: day,
                                        hour: hour, minute: minute, second: second)
        guard let date = Calendar.utc.date(from: components) else { return nil }
        return Int64(date.timeIntervalSince1970) * 1000 + Int64(fraction)
    }

    private static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC, for the names Ferry writes.
    package static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
