/// Text put into the XML bodies the backends write by hand (WebDAV PROPPATCH, S3
/// DeleteObjects): `&`, `<` and `>` escaped, so a name or an ETag holding them cannot
/// break the document. Quotes need no escape in element text, and are left as they are.
/// (Control characters cannot be written in XML 1.0 at all; the servers refuse such
/// names too.)
public enum XMLText {
    /// `text` as element content.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
