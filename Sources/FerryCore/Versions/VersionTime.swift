import FerryEngine
import Foundation

/// The moments `ferry versions` shows and `ferry pull --version` takes, always in UTC:
/// `2026-12-05T13:44:55.123Z` as shown; also taken without the fraction, the seconds or
/// the `Z` (`2026-12-05T13:44`, with a space for the `T`), as a date alone (its midnight),
/// or as a saved name's stamp (`20261205-134455.123Z`).
public enum VersionTime {
    public static func format(_ millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                                from: Date(timeIntervalSince1970: Double(seconds)))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                      parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, Int(millis - seconds * 1000))
    }

    /// Milliseconds since 1970, or nil for text in none of the forms.
    public static func parse(_ text: String) -> Int64? {
        if let stamp = VersionName.millis(ofStamp: text) { return stamp }
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if rest.hasSuffix("Z") || rest.hasSuffix("z") { rest = rest.dropLast() }
        func take(_ count: Int, range: ClosedRange<Int>) -> Int? {
            let digits = rest.prefix(count)
            guard digits.count == count, digits.allSatisfy(\.isASCII), let value = Int(digits), range.contains(value) else { return nil }
            rest = rest.dropFirst(count)
            return value
        }
        func skip(_ separators: Set<Character>) -> Bool {
            guard let first = rest.first, separators.contains(first) else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = take(4, range: 1970...9999), skip(["-"]), let month = take(2, range: 1...12), skip(["-"]),
              let day = take(2, range: 1...31) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0
        if !rest.isEmpty {
            guard skip(["T", "t", " "]), let h = take(2, range: 0...23), skip([":"]), let m = take(2, range: 0...59) else { return nil }
            (hour, minute) = (h, m)
            if skip([":"]) {
                guard let s = take(2, range: 0...60) else { return nil }
                second = s
                if skip([".", ","]) {
                    let digits = rest.prefix { $0.isASCII && $0.isNumber }
                    guard !digits.isEmpty, let value = Int(digits.prefix(3).padding(toLength: 3, withPad: "0", startingAt: 0)) else {
                        return nil
                    }
                    fraction = value
                    rest = rest.dropFirst(digits.count)
                }
            }
        }
        guard rest.isEmpty else { return nil }
        let components = DateComponents(timeZone: TimeZone(identifier: "UTC"), year: year, month: month, day: day,
                                        hour: hour, minute: minute, second: second)
        guard let date = Calendar.utc.date(from: components),
              Calendar.utc.component(.day, from: date) == day else { return nil }
        return Int64(date.timeIntervalSince1970) * 1000 + Int64(fraction)
    }
}
