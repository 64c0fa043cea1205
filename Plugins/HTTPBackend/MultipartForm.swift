import CurlTransport
import Foundation

/// A `multipart/form-data` body (RFC 7578) of text fields followed by one file, as the
/// transport's body parts: the headers and fields are small `Data` pieces, the file is
/// read from disk while it is sent, never loaded into memory.
struct MultipartForm: Sendable, Equatable {
    /// Random, so that it does not occur in the file (the odds for 128 random bits are nil,
    /// which is what browsers rely on too).
    let boundary: String

    init(boundary: String = "ferry-" + MultipartForm.randomHex(bytes: 16)) {
        self.boundary = boundary
    }

    var contentType: String { "multipart/form-data; boundary=" + boundary }

    /// The body: each text field, then the file part named `fileField` with `fileName`
    /// and the bytes of `content`.
    func parts(fields: [(name: String, value: String)], fileField: String, fileName: String,
               content: HTTPRequest.BodyPart) -> [HTTPRequest.BodyPart] {
        var head = ""
        for field in fields {
            head += "--\(boundary)\r\n"
            head += "Content-Disposition: form-data; name=\"\(Self.quoted(field.name))\"\r\n\r\n"
            head += field.value + "\r\n"
        }
        head += "--\(boundary)\r\n"
        head += "Content-Disposition: form-data; name=\"\(Self.quoted(fileField))\"; filename=\"\(Self.quoted(fileName))\"\r\n"
        head += "Content-Type: application/octet-stream\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        return [.data(Data(head.utf8)), content, .data(Data(tail.utf8))]
    }

    /// A name or file name inside a quoted header parameter, escaped the way browsers do
    /// it (HTML's form submission rules): `"` as `%22`, CR as `%0D`, LF as `%0A`.
    static func quoted(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}
