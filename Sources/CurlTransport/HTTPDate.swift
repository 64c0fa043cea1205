/// HTTP dates (RFC 9110 §5.6.7), parsed and written by hand so that neither the machine's
/// locale nor its time zone can change the result.
///
/// Accepted forms:
/// - IMF-fixdate (RFC 1123): `Sun, 06 Nov 1994 08:49:37 GMT` — what servers send;
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` — a two-digit year below 70 is 20xx, else
///   19xx (a four-digit year is taken as it is);
/// - C asctime: `Sun Nov  6 08:49:37 1994`, always UTC.
///
/// Leniency, for servers seen in the wild: names of days and months in any letter case,
/// the day name left out (`06 Nov 1994 08:49:37 GMT`), `UTC`/`UT`/`Z` or a numeric offset
/// (`+0100`) in place of `GMT`, and the day name not checked against the date.
public enum HTTPDate {
    /// Nanoseconds since 1970 for an HTTP date, or nil when the text is not one (or is out
    /// of the range that nanoseconds in an `Int64` can hold, about 1678–2262).
    public static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(Text(bytes: $0)) }
    }

    /// Byte-level view of the date text (ASCII only matters; anything else fails a check).
    private struct Text {
        let bytes: UnsafeBufferPointer<UInt8>

        /// The white-space separated tokens, at most `limit` of them (nil when there are more).
        func tokens(limit: Int) -> [Range<Int>]? {
            var tokens: [Range<Int>] = []
            var index = 0
            while index < bytes.count {
                if Text.isSpace(bytes[index]) {
                    index += 1
                    continue
                }
                let start = index
                while index < bytes.count, !Text.isSpace(bytes[index]) { index += 1 }
                guard tokens.count < limit else { return nil }
                tokens.append(start..<index)
            }
            return tokens
        }

        /// Splits a token at each `separator`.
        func split(_ range: Range<Int>, at separator: UInt8) -> [Range<Int>] {
            var parts: [Range<Int>] = []
            var start = range.lowerBound
            for index in range where bytes[index] == separator {
                parts.append(start..<index)
                start = index + 1
            }
            parts.append(start..<range.upperBound)
            return parts
        }

        func number(_ range: Range<Int>, digits: ClosedRange<Int>) -> Int? {
            guard range.count >= digits.lowerBound, range.count <= digits.upperBound else { return nil }
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }

        /// A token folded to lower case and packed 7 bits per character (up to 9 ASCII
        /// characters), so that names compare as integers; nil for anything else.
        func key(_ range: Range<Int>) -> UInt64? {
            guard range.count <= 9 else { return nil }
            var key: UInt64 = 0
            for index in range {
                var byte = bytes[index]
                guard byte < 0x80 else { return nil }
                if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 32 }
                key = key << 7 | UInt64(byte)
            }
            return key
        }

        func isDayName(_ range: Range<Int>) -> Bool {
            guard let key = key(range) else { return false }
            return HTTPDate.dayKeys.contains(key)
        }

        func month(_ range: Range<Int>) -> Int? {
            guard let key = key(range), let index = HTTPDate.monthKeys.firstIndex(of: key) else { return nil }
            return index + 1
        }

        /// The zone's offset east of UTC, in seconds.
        func zoneOffset(_ range: Range<Int>) -> Int? {
            if let key = key(range), HTTPDate.utcKeys.contains(key) { return 0 }
            guard range.count == 5, let sign = range.first.map({ bytes[$0] }),
                  sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
                  let hhmm = number(range.dropFirst(), digits: 4...4) else { return nil }
            let hours = hhmm / 100, minutes = hhmm % 100
            guard hours <= 23, minutes <= 59 else { return nil }
            let offset = hours * 3600 + minutes * 60
            return sign == UInt8(ascii: "-") ? -offset : offset
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
    }

    private static func parse(_ text: Text) -> Int64? {
        if let nanos = parseFixdate(text) { return nanos }
        guard let tokens = text.tokens(limit: 6), let first = tokens.first else { return nil }

        if text.bytes[first.upperBound - 1] == UInt8(ascii: ",") {
            guard text.isDayName(first.lowerBound..<(first.upperBound - 1)) else { return nil }
            if tokens.count == 6 {
                // Sun, 06 Nov 1994 08:49:37 GMT
                return build(text, day: tokens[1], month: tokens[2], year: tokens[3], yearDigits: 4...4,
                             time: tokens[4], zone: tokens[5])
            }
            if tokens.count == 4 {
                // Sunday, 06-Nov-94 08:49:37 GMT
                let parts = text.split(tokens[1], at: UInt8(ascii: "-"))
                guard parts.count == 3 else { return nil }
                return build(text, day: parts[0], month: parts[1], year: parts[2], yearDigits: 2...4,
                             time: tokens[2], zone: tokens[3])
            }
            return nil
        }
        guard tokens.count == 5 else { return nil }
        if text.isDayName(first) {
            // Sun Nov  6 08:49:37 1994
            return build(text, day: tokens[2], month: tokens[1], year: tokens[4], yearDigits: 4...4,
                         time: tokens[3], zone: nil)
        }
        // 06 Nov 1994 08:49:37 GMT (no day name)
        return build(text, day: tokens[0], month: tokens[1], year: tokens[2], yearDigits: 4...4,
                     time: tokens[3], zone: tokens[4])
    }

    /// The IMF-fixdate form of a time (`Sun, 06 Nov 1994 08:49:37 GMT`); the sub-second
    /// part is dropped (rounded towards the past).
    public static func format(nanos: Int64) -> String {
        let seconds = floorDivide(nanos, 1_000_000_000)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = Int((days % 7 + 7 + 4) % 7)
        return dayNames[weekday] + ", " + pad(day, 2) + " " + monthNames[month - 1] + " " + pad(year, 4) + " "
            + pad(Int(secondOfDay / 3600), 2) + ":" + pad(Int(secondOfDay / 60 % 60), 2) + ":"
            + pad(Int(secondOfDay % 60), 2) + " GMT"
    }

    // MARK: Parts

    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let dayKeys = Set((dayNames + longDayNames).map(packedKey))
    private static let monthKeys = monthNames.map(packedKey)
    private static let utcKeys = Set(["GMT", "UTC", "UT", "Z"].map(packedKey))

    private static func packedKey(_ word: String) -> UInt64 {
        var word = word
        return word.withUTF8 { Text(bytes: $0).key(0..<$0.count) ?? 0 }
    }

    /// The exact IMF-fixdate layout, `Sun, 06 Nov 1994 08:49:37 GMT`, which nearly every
    /// server sends, read at fixed offsets; anything else goes the general way.
    private static func parseFixdate(_ text: Text) -> Int64? {
        let bytes = text.bytes
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
              bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
              text.isDayName(0..<3) else { return nil }
        return build(text, day: 5..<7, month: 8..<11, year: 12..<16, yearDigits: 4...4,
                     clock: [17..<19, 20..<22, 23..<25], zone: 26..<29)
    }

    /// `zone` nil means UTC (asctime has none).
    private static func build(_ text: Text, day: Range<Int>, month monthRange: Range<Int>, year yearRange: Range<Int>,
                              yearDigits: ClosedRange<Int>, time: Range<Int>, zone: Range<Int>?) -> Int64? {
        build(text, day: day, month: monthRange, year: yearRange, yearDigits: yearDigits,
              clock: text.split(time, at: UInt8(ascii: ":")), zone: zone)
    }

    /// `clock` holds the hour, minute and second fields.
    private static func build(_ text: Text, day: Range<Int>, month monthRange: Range<Int>, year yearRange: Range<Int>,
                              yearDigits: ClosedRange<Int>, clock: [Range<Int>], zone: Range<Int>?) -> Int64? {
        guard let day = text.number(day, digits: 1...2),
              let month = text.month(monthRange),
              var year = text.number(yearRange, digits: yearDigits) else { return nil }
        var offset = 0
        if let zone {
            guard let zoneOffset = text.zoneOffset(zone) else { return nil }
            offset = zoneOffset
        }
        switch yearRange.count {
        case 2: year += year < 70 ? 2000 : 1900
        case 3: return nil
        default: break
        }
        guard clock.count == 3,
              let hour = text.number(clock[0], digits: 1...2),
              let minute = text.number(clock[1], digits: 2...2),
              let second = text.number(clock[2], digits: 2...2) else { return nil }
        guard year >= 1, day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60 else { return nil }

        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? nil : nanos
    }

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil` (H. Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
