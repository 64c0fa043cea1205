#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation

/// Reads the `207 Multi-Status` answer to a `PROPPATCH` (RFC 4918 §9.2): whether every
/// property was set. A PROPPATCH is all or nothing, but a server answers per property
/// (`200`, or `403`/`409`/`424` for each one it refused), so a single non-2xx status, or
/// no status at all, means the properties were not stored.
enum PropPatchResponse {
    static func allPropertiesSet(_ body: Data) -> Bool {
        // The same refusal of DTDs (and so of entities) as for listings.
        guard !body.isEmpty, XMLProlog.problem(in: body) == nil else { return false }
        let reader = StatusReader()
        let parser = XMLParser(stream: InputStream(data: body))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.delegate = reader
        let parsed = withExtendedLifetime(reader) { parser.parse() }
        parser.delegate = nil
        return parsed && !reader.malformed && !reader.statuses.isEmpty
            && reader.statuses.allSatisfy { (200..<300).contains($0) }
    }

    /// Collects the code of every `<status>` in the document (per propstat, or per
    /// response when a server answers for the whole resource).
    private final class StatusReader: NSObject, XMLParserDelegate {
        var statuses: [Int] = []
        var malformed = false
        private var inStatus = false
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String]) {
            if namespaceURI == WebDAVNamespace.uri, elementName == "status" {
                inStatus = true
                text = ""
            }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?) {
            guard inStatus, namespaceURI == WebDAVNamespace.uri, elementName == "status" else { return }
            inStatus = false
            // `HTTP/1.1 200 OK`
            let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else {
                malformed = true
                return
            }
            statuses.append(code)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if inStatus { text += string }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            malformed = true
        }
    }
}
