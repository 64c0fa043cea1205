import Crypto
import CurlTransport
import FerryPluginAPI
import Foundation

/// The request body of S3's DeleteObjects (`POST /BUCKET?delete`) and what its answer
/// says about each key.
///
/// The body asks for quiet mode: the store then lists only the keys it could not delete,
/// so a thousand successful deletions answer with an almost empty document.
enum DeleteObjectsMessage {
    /// The most keys one request may name (S3's limit).
    static let maxKeys = 1_000

    /// One key the store did not delete, with its S3 error code and message.
    struct KeyFailure: Sendable, Equatable {
        var key: String
        var code: String?
        var message: String?
    }

    /// `<Delete><Quiet>true</Quiet><Object><Key>…</Key></Object>…</Delete>`, keys escaped
    /// for XML.
    static func body(keys: [String]) -> Data {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            + "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
        for key in keys {
            xml += "<Object><Key>" + XMLText.escaped(key) + "</Key></Object>"
        }
        xml += "</Delete>"
        return Data(xml.utf8)
    }

    /// The base64 MD5 the store checks the body against: DeleteObjects requires one.
    static func contentMD5(_ body: Data) -> String {
        Data(Insecure.MD5.hash(data: body)).base64EncodedString()
    }

    /// The keys a `DeleteResult` answer lists under `<Error>`. A document that is not a
    /// `DeleteResult` is a protocol violation: nothing can be said about any key.
    static func failures(_ body: Data) throws(BackendError) -> [KeyFailure] {
        var failures: [KeyFailure] = []
        var current = KeyFailure(key: "")
        let root = S3XMLReader.read(body, field: { field in
            switch field.path {
            case ["Error", "Key"]: current.key = field.text
            case ["Error", "Code"]: current.code = field.text
            case ["Error", "Message"]: current.message = field.text
            default: break
            }
        }, ended: { path in
            if path == ["Error"] {
                if !current.key.isEmpty { failures.append(current) }
                current = KeyFailure(key: "")
            }
        })
        guard root == "DeleteResult" else {
            throw BackendError(.protocolViolation, "the store's DeleteObjects answer does not parse",
                               cause: String(decoding: body.prefix(200), as: UTF8.self))
        }
        return failures
    }
}
