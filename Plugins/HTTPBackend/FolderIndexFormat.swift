import Foundation

/// The two kinds of folder index the HTTP backend reads.
enum FolderIndexFormat: String, Sendable, Equatable {
    /// nginx `autoindex_format json`: `[{"name", "type", "mtime", "size"}]`.
    case json
    /// A directory page with one link per member (Apache, nginx, `python3 -m http.server`).
    case html

    /// The format of an index answer, from its `Content-Type`, else from its first
    /// non-blank byte; nil when it is neither.
    static func detect(contentType: String?, body: Data) -> FolderIndexFormat? {
        if let contentType {
            let mediaType = contentType.split(separator: ";").first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
            if mediaType == "application/json" || mediaType.hasSuffix("+json") { return .json }
            if mediaType == "text/html" || mediaType == "application/xhtml+xml" { return .html }
        }
        // A UTF-8 byte order mark, then white space, may come before the first character.
        let text = body.starts(with: [0xEF, 0xBB, 0xBF]) ? body.dropFirst(3) : body[...]
        guard let first = text.first(where: { !isBlank($0) }) else { return nil }
        if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") { return .json }
        if first == UInt8(ascii: "<") { return .html }
        return nil
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
