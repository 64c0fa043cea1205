/// Decodes the character references an attribute value may hold (`&amp;`, `&#39;`,
/// `&#x2F;`). Index pages escape only a handful, so only the five XML names are known;
/// an unknown name, or a reference without its `;`, stays as it is written.
enum HTMLCharacterReferences {
    struct Refusal: Error, Equatable {
        var reason: String
    }

    private static let named: [Substring: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'",
    ]

    /// The value with its references replaced; a numeric reference to something that is
    /// not a Unicode scalar (a surrogate, beyond U+10FFFF) is refused.
    static func decode(_ value: String) throws(Refusal) -> String {
        guard value.contains("&") else { return value }
        var result = String.UnicodeScalarView()
        let scalars = value.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            guard scalar == "&", let semicolon = scalars[index...].prefix(34).firstIndex(of: ";") else {
                result.append(scalar)
                index = scalars.index(after: index)
                continue
            }
            let body = Substring(scalars[scalars.index(after: index)..<semicolon])
            if let decoded = try reference(body) {
                result.append(decoded)
                index = scalars.index(after: semicolon)
            } else {
                result.append(scalar)
                index = scalars.index(after: index)
            }
        }
        return String(result)
    }

    /// The scalar that `&BODY;` stands for, nil when it is not a reference we know.
    private static func reference(_ body: Substring) throws(Refusal) -> Unicode.Scalar? {
        if let scalar = named[body] { return scalar }
        guard body.hasPrefix("#") else { return nil }
        var digits = body.dropFirst()
        var radix = 10
        if digits.first == "x" || digits.first == "X" {
            digits = digits.dropFirst()
            radix = 16
        }
        guard !digits.isEmpty, let value = UInt32(digits, radix: radix) else { return nil }
        guard let scalar = Unicode.Scalar(value) else {
            throw Refusal(reason: "has the character reference &\(body); which is not a Unicode character")
        }
        return scalar
    }
}
