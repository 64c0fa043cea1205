import Foundation

/// ETags as S3 sends them, with their quotes (`"9e107d9d…"`); a value sent without quotes
/// gets them, so listings and transfer answers compare equal.
enum ETag {
    static func normalized(_ text: String) -> String {
        let bare = text.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return "\"" + bare + "\""
    }

    /// The MD5 hex of a single-part upload's ETag; nil for a multipart or encrypted one.
    static func md5Hex(_ etag: String) -> String? {
        let bare = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        guard bare.utf8.count == 32, bare.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return bare
    }
}
