import FoundationXML
import Foundation

/// Reads an S3 XML answer as a sequence of (element path, text) pairs for the elements
/// that hold text, plus an event when a chosen element ends: enough for S3's flat
/// documents (ListObjectsV2, ListParts, errors, multipart answers). Namespaces are
/// dropped; a document that does not parse is nil.
struct S3XMLReader {
    /// One element with text: its path from the root's child (`["Contents", "Key"]`).
    struct Field {
        var path: [String]
        var text: String
    }

    /// Calls `field` for each text element and `ended` for each element that ends, in
    /// order; returns the root element's name, or nil when the document does not parse.
    @discardableResult
    static func read(_ data: Data, field: @escaping (Field) -> Void, ended: @escaping ([String]) -> Void = { _ in }) -> String? {
        let parser = XMLParser(stream: InputStream(data: data))
        let handler = Handler(field: field, ended: ended)
        parser.delegate = handler
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        return parser.parse() && !handler.failed ? handler.root : nil
    }

    private final class Handler: NSObject, XMLParserDelegate {
        let field: (Field) -> Void
        let ended: ([String]) -> Void
        var path: [String] = []
        var text = ""
        var failed = false
        var root: String?

        init(field: @escaping (Field) -> Void, ended: @escaping ([String]) -> Void) {
            self.field = field
            self.ended = ended
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            if path.isEmpty { root = elementName }
            path.append(elementName)
            text = ""
            if path.count > 16 { failed = true; parser.abortParsing() }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            // The root element is left out of paths: `<ListBucketResult><Contents><Key>` is `Contents/Key`.
            let relative = Array(path.dropFirst())
            if !text.isEmpty, !relative.isEmpty { field(Field(path: relative, text: text)) }
            ended(relative)
            text = ""
            path.removeLast()
        }
    }
}
