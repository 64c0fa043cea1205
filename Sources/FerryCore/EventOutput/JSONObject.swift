import Foundation

/// A JSON object written in the order its keys were added (so `event` comes first), as one line.
public struct JSONObject: Sendable {
    private var fields: [String] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String?) {
        fields.append("\(Self.quote(key)):\(value.map(Self.quote) ?? "null")")
    }

    public mutating func add(_ key: String, _ value: Int64) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    public mutating func add(_ key: String, _ value: Int) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    public mutating func add(_ key: String, _ value: Double) {
        let rounded = (value * 1000).rounded() / 1000
        fields.append("\(Self.quote(key)):\(rounded.isFinite ? String(rounded) : "null")")
    }

    public mutating func add(_ key: String, _ value: Bool) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    public mutating func add(_ key: String, _ value: JSONObject) {
        fields.append("\(Self.quote(key)):\(value.text)")
    }

    public mutating func add(_ key: String, _ values: [JSONObject]) {
        fields.append("\(Self.quote(key)):[\(values.map(\.text).joined(separator: ","))]")
    }

    public mutating func add(_ key: String, _ values: [String]) {
        fields.append("\(Self.quote(key)):[\(values.map(Self.quote).joined(separator: ","))]")
    }

    /// A value that is JSON text already (encoded by JSONEncoder).
    public mutating func add(_ key: String, json text: String) {
        fields.append("\(Self.quote(key)):\(text)")
    }

    public var text: String { "{" + fields.joined(separator: ",") + "}" }

    public static func quote(_ string: String) -> String {
        // Most names and messages need no escape: looking at their bytes is a fraction of
        // building the text scalar by scalar (the `--json` events of a pull of small files
        // were 6% of its own CPU). A byte from 0x80 up belongs to a scalar from U+0080 up,
        // which is written as it is either way.
        if string.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0x7F }) {
            return "\"" + string + "\""
        }
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
