import Foundation

/// What the journal keeps of a multipart upload while it runs: the upload's id, its part
/// size, and each part the store acknowledged with its ETag, recorded as the part
/// finishes (`TransferObserver.uploadCheckpoint`). The next run continues exactly this
/// upload, even when the store lists other unfinished uploads of the same key.
struct MultipartCheckpoint: Codable, Sendable, Equatable {
    struct Part: Codable, Sendable, Equatable {
        var number: Int
        var etag: String
    }

    /// Bumped when the fields change meaning; an unknown format is no checkpoint.
    var format = 1
    var key: String
    var uploadID: String
    var partSize: Int64
    var parts: [Part] = []

    init(key: String, uploadID: String, partSize: Int64) {
        self.key = key
        self.uploadID = uploadID
        self.partSize = partSize
    }

    /// The checkpoint `text` holds for `key`; nil for anything else (another key, another
    /// format, text that is not a checkpoint).
    init?(text: String, key: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)),
              decoded.format == 1, decoded.key == key, !decoded.uploadID.isEmpty, decoded.partSize > 0 else { return nil }
        self = decoded
    }

    var text: String {
        // Encoding plain strings and integers cannot fail.
        String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The ETags recorded, by part number.
    var etags: [Int: String] {
        Dictionary(parts.map { ($0.number, ETag.normalized($0.etag)) }, uniquingKeysWith: { _, last in last })
    }
}
