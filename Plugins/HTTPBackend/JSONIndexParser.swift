import CurlTransport
import FerryPluginAPI
import Foundation

/// Reads an nginx `autoindex_format json` folder index:
///
/// ```json
/// [
/// { "name":"sub", "type":"directory", "mtime":"Sun, 22 Nov 2026 20:32:30 GMT" },
/// { "name":"x y.txt", "type":"file", "mtime":"Sun, 22 Nov 2026 20:32:30 GMT", "size":6 }
/// ]
/// ```
///
/// Names are plain (JSON-escaped, not percent-encoded); `mtime` is an RFC 1123 date;
/// `size` is given for files only. `type: "other"` (sockets, devices, broken links) is
/// skipped, since such an entry cannot be downloaded. Unknown keys are ignored.
///
/// The whole index is refused (`protocolViolation`) when it is not a JSON array of such
/// objects, when a name is not a valid file name (`..`, a `/`, a control character) or
/// appears twice, when a file has no size or a date cannot be read, or when it is larger
/// than `IndexLimits` allow.
public enum JSONIndexParser {
    private struct Item: Decodable {
        var name: String
        var type: String
        var mtime: String?
        var size: Int64?
    }

    public static func parse(_ body: Data, directory: RelativePath, limits: IndexLimits) throws(BackendError) -> [IndexEntry] {
        guard body.count <= limits.maxBytes else {
            throw IndexRefusal.error("the index is \(body.count) bytes, more than the limit of \(limits.maxBytes)",
                                     directory: directory)
        }
        let items: [Item]
        do {
            items = try JSONDecoder().decode([Item].self, from: body)
        } catch let error as DecodingError {
            throw IndexRefusal.error("the JSON index is malformed: " + describe(error), directory: directory)
        } catch {
            throw IndexRefusal.error("the JSON index is malformed: \(error)", directory: directory)
        }
        guard items.count <= limits.maxEntries else {
            throw IndexRefusal.error("the folder has more than \(limits.maxEntries) entries (the listing limit)",
                                     directory: directory)
        }
        var entries: [IndexEntry] = []
        entries.reserveCapacity(items.count)
        // As bytes: two names in different Unicode forms are two files (the core reports them).
        var names: Set<[UInt8]> = []
        for item in items {
            let kind: RemoteEntry.Kind
            switch item.type {
            case "file": kind = .file
            case "directory": kind = .directory
            case "other": continue
            default:
                throw IndexRefusal.error("the entry \(item.name.debugDescription) has the unknown type \(item.type.debugDescription)",
                                         directory: directory)
            }
            do {
                try RelativePath.validate(name: item.name, in: item.name)
            } catch {
                throw IndexRefusal.error("the name \(item.name.debugDescription) is not a valid file name (\(error.message))",
                                         directory: directory)
            }
            guard names.insert(Array(item.name.utf8)).inserted else {
                throw IndexRefusal.error("the name \(item.name.debugDescription) appears twice", directory: directory)
            }
            var modified: Int64?
            if let text = item.mtime {
                guard let nanos = HTTPDate.parse(text) else {
                    throw IndexRefusal.error("the entry \(item.name.debugDescription) has the unreadable date \(text.debugDescription)",
                                             directory: directory)
                }
                modified = nanos
            }
            var size: Int64?
            if kind == .file {
                guard let value = item.size, value >= 0 else {
                    throw IndexRefusal.error("the file \(item.name.debugDescription) has no valid size", directory: directory)
                }
                size = value
            }
            entries.append(IndexEntry(name: item.name, kind: kind, size: size, modifiedNanos: modified))
        }
        return entries
    }

    /// A short reason, with where in the document it is (`entry 3, size`).
    private static func describe(_ error: DecodingError) -> String {
        func location(_ path: [any CodingKey]) -> String {
            let parts = path.map { key in key.intValue.map { "entry \($0 + 1)" } ?? key.stringValue }
            return parts.isEmpty ? "the document" : parts.joined(separator: ", ")
        }
        switch error {
        case let .typeMismatch(_, context):
            return context.codingPath.isEmpty ? "it is not an array" : "\(location(context.codingPath)) has the wrong type"
        case let .valueNotFound(_, context):
            return "\(location(context.codingPath)) is null"
        case let .keyNotFound(key, context):
            return "\(location(context.codingPath)) has no \(key.stringValue.debugDescription)"
        case let .dataCorrupted(context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(location(context.codingPath)) is invalid"
        @unknown default:
            return "\(error)"
        }
    }
}
