import Foundation

/// A JSON object written in the order its keys were added (so `event` comes first), as one line.
struct JSONObject {
    private var fields: [String] = []

    init() {}

    mutating func add(_ key: String, _ value: String?) {
        fields.append("\(Self.quote(key)):\(value.map(Self.quote) ?? "null")")
    }

    mutating func add(_ key: String, _ value: Int64) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    mutating func add(_ key: String, _ value: Int) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    mutating func add(_ key: String, _ value: Double) {
        let rounded = (value * 1000).rounded() / 1000
        fields.append("\(Self.quote(key)):\(rounded.isFinite ? String(rounded) : "null")")
    }

    mutating func add(_ key: String, _ value: Bool) {
        fields.append("\(Self.quote(key)):\(value)")
    }

    mutating func add(_ key: String, _ value: JSONObject) {
        fields.append("\(Self.quote(key)):\(value.text)")
    }

    mutating func add(_ key: String, _ values: [JSONObject]) {
        fields.append("\(Self.quote(key)):[\(values.map(\.text).joined(separator: ","))]")
    }

    mutating func add(_ key: String, _ values: [String]) {
        fields.append("\(Self.quote(key)):[\(values.map(Self.quote).joined(separator: ","))]")
    }

    /// A value that is JSON text already (encoded by JSONEncoder).
    mutating func add(_ key: String, json text: String) {
        fields.append("\(Self.quote(key)):\(text)")
    }

    var text: String { "{" + fields.joined(separator: ",") + "}" }

    static func quote(_ string: String) -> String {
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
