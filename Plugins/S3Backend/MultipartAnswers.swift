import FerryPluginAPI
import Foundation

/// The answers of S3's multipart calls that Ferry reads.
enum MultipartAnswers {
    /// An upload in progress, from ListMultipartUploads.
    struct Upload: Sendable, Equatable {
        var key: String
        var uploadID: String
        var initiatedNanos: Int64?
    }

    /// A part the store holds, from ListParts.
    struct Part: Sendable, Equatable {
        var number: Int
        var etag: String
        var size: Int64
    }

    static func uploadID(_ body: Data) throws(BackendError) -> String {
        var id: String?
        S3XMLReader.read(body) { field in
            if field.path == ["UploadId"] { id = field.text }
        }
        guard let id, !id.isEmpty else {
            throw BackendError(.protocolViolation, "the store's answer to CreateMultipartUpload has no UploadId")
        }
        return id
    }

    /// One page of ListMultipartUploads: the uploads, and the markers of the next page.
    static func uploads(_ body: Data) throws(BackendError) -> (uploads: [Upload], nextKeyMarker: String?, nextUploadIDMarker: String?) {
        var uploads: [Upload] = []
        var current = Upload(key: "", uploadID: "")
        var truncated = false
        var nextKey: String?
        var nextID: String?
        let root = S3XMLReader.read(body, field: { field in
            switch field.path {
            case ["Upload", "Key"]: current.key = field.text
            case ["Upload", "UploadId"]: current.uploadID = field.text
            case ["Upload", "Initiated"]: current.initiatedNanos = ISO8601Time.nanos(field.text)
            case ["IsTruncated"]: truncated = field.text == "true"
            case ["NextKeyMarker"]: nextKey = field.text
            case ["NextUploadIdMarker"]: nextID = field.text
            default: break
            }
        }, ended: { path in
            if path == ["Upload"] {
                if !current.uploadID.isEmpty { uploads.append(current) }
                current = Upload(key: "", uploadID: "")
            }
        })
        guard root == "ListMultipartUploadsResult" else { throw BackendError(.protocolViolation, "the store's ListMultipartUploads answer does not parse") }
        return (uploads, truncated ? nextKey : nil, truncated ? nextID : nil)
    }

    /// One page of ListParts: the parts, and the marker of the next page.
    static func parts(_ body: Data) throws(BackendError) -> (parts: [Part], nextMarker: Int?) {
        var parts: [Part] = []
        var current = Part(number: 0, etag: "", size: -1)
        var truncated = false
        var next: Int?
        let root = S3XMLReader.read(body, field: { field in
            switch field.path {
            case ["Part", "PartNumber"]: current.number = Int(field.text) ?? 0
            case ["Part", "ETag"]: current.etag = ETag.normalized(field.text)
            case ["Part", "Size"]: current.size = Int64(field.text) ?? -1
            case ["IsTruncated"]: truncated = field.text == "true"
            case ["NextPartNumberMarker"]: next = Int(field.text)
            default: break
            }
        }, ended: { path in
            if path == ["Part"] {
                if current.number > 0, current.size >= 0 { parts.append(current) }
                current = Part(number: 0, etag: "", size: -1)
            }
        })
        // moto names the root ListPartsResponse.
        guard root == "ListPartsResult" || root == "ListPartsResponse" else { throw BackendError(.protocolViolation, "the store's ListParts answer does not parse") }
        return (parts, truncated ? next : nil)
    }

    /// The body of CompleteMultipartUpload.
    static func completionBody(_ parts: [(number: Int, etag: String)]) -> Data {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts.sorted(by: { $0.number < $1.number }) {
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(part.etag.replacingOccurrences(of: "\"", with: "&quot;"))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        return Data(xml.utf8)
    }

    /// The ETag in CompleteMultipartUpload's answer, or the error the store put in a 200.
    static func completion(_ body: Data) -> (etag: String?, error: S3ErrorResponse?) {
        var etag: String?
        var rootIsError = false
        var code: String?
        var message: String?
        S3XMLReader.read(body) { field in
            switch field.path {
            case ["ETag"]: etag = ETag.normalized(field.text)
            case ["Code"]: code = field.text; rootIsError = true
            case ["Message"]: message = field.text
            default: break
            }
        }
        return (etag, rootIsError ? S3ErrorResponse(code: code, message: message) : nil)
    }
}
