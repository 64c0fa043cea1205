#if canImport(FoundationXML)
import FoundationXML
#endif
import CurlTransport
import FerryPluginAPI
import Foundation

/// Reads the `207 Multi-Status` answer to a `PROPFIND Depth: 1` (RFC 4918 §9.1, §14.16)
/// into the entries of one folder.
///
/// A listing comes from a server we do not control, so it is read strictly, and a listing
/// that is hostile or broken is refused as a whole (`.protocolViolation`), never followed
/// in part:
/// - elements are matched by namespace URI (`DAV:`) and local name, never by prefix;
/// - a document type declaration is refused before XML parsing starts, so no entity can
///   be defined (no "billion laughs", no external entity); XML parse errors are fatal;
/// - every `<href>` must name the requested collection itself or exactly one direct
///   member of it; each member name must be a valid `RelativePath` component, once;
/// - only `<propstat>` blocks with a 2xx status give values (missing properties come
///   back under 404); a `<response>` with a non-2xx status and no `<propstat>` is skipped;
/// - a file's modification time is Ferry's `mtime` property (`ModificationTimeProperty`)
///   when the file still has the version that property was set for, else `getlastmodified`;
/// - the body's size and the number of entries are bounded by `ListingLimits`.
///
/// The parse streams (`XMLParser(stream:)`, which unlike `XMLParser(data:)` has no 10 MB
/// limit on Linux) and builds no document tree.
public enum MultistatusParser {
    /// Parses the body of a `PROPFIND Depth: 1` on the collection whose URL path (as sent, percent-encoded,
    /// e.g. "/dav/photos/2024%20Alps/") is `requestPath`, and whose RelativePath (relative to the backend
    /// root) is `directory`.
    ///
    /// The collection's own `<response>` (matched with or without a trailing slash) gives
    /// `collectionETag` and is not a child. A file's `Depth: 0` answer can be read with the
    /// file's parent as `requestPath`/`directory`: the file is then the only child.
    public static func parse(_ body: Data, requestPath: String, directory: RelativePath,
                             limits: ListingLimits) throws(BackendError) -> DAVListing {
        let context = directory.description
        guard !body.isEmpty else {
            throw refusal("the PROPFIND response body is empty", path: context)
        }
        guard body.count <= limits.maxBytes else {
            throw refusal("the PROPFIND response is \(body.count) bytes, more than the limit of \(limits.maxBytes)",
                          path: context)
        }
        let matcher: DAVHref.Matcher
        do {
            matcher = try DAVHref.Matcher(requestPath: requestPath)
        } catch {
            let detail = "cannot list the URL path \(requestPath.debugDescription): \(error.reason)"
            throw BackendError(.invalidName, detail, path: context)
        }
        if let problem = XMLProlog.problem(in: body) {
            throw refusal(problem, path: context)
        }

        let handler = MultistatusHandler(matcher: matcher, directory: directory, limits: limits)
        let parser = XMLParser(stream: InputStream(data: body))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.delegate = handler
        let succeeded = withExtendedLifetime(handler) { parser.parse() }
        parser.delegate = nil

        if let failure = handler.failure {
            throw failure
        }
        if let xmlError = handler.xmlError {
            let reason = XMLProlog.describe(libxml2Code: xmlError.code)
            throw refusal("the PROPFIND response is not well-formed XML: \(reason)", line: xmlError.line, path: context)
        }
        guard succeeded else {
            throw refusal("the PROPFIND response could not be parsed as XML", line: parser.lineNumber, path: context)
        }
        guard handler.finished else {
            throw refusal(handler.sawRoot
                          ? "the PROPFIND response ends before </multistatus> (truncated?)"
                          : "the PROPFIND response contains no XML element",
                          line: parser.lineNumber, path: context)
        }
        return handler.listing()
    }

    static func refusal(_ detail: String, line: Int? = nil, path: String) -> BackendError {
        var message = "refusing the WebDAV folder listing: " + detail
        if let line, line > 0 { message += " (line \(line))" }
        return BackendError(.protocolViolation, message, path: path)
    }
}

// MARK: - SAX handler

/// Receives XMLParser's events; keeps only the current `<response>` and the children so
/// far. The first failure is kept and stops the parse.
private final class MultistatusHandler: NSObject, XMLParserDelegate {
    private enum Node {
        case multistatus, response, href, responseStatus, propstat, propstatStatus, prop
        case resourcetype, contentLength, lastModified, etag
        /// Ferry's own properties (`ModificationTimeProperty`).
        case preservedMtime, preservedMtimeVersion
        /// Anything we do not read (foreign namespaces, other DAV: properties), with its subtree.
        case other

        var collectsText: Bool {
            switch self {
            case .href, .responseStatus, .propstatStatus, .contentLength, .lastModified, .etag,
                 .preservedMtime, .preservedMtimeVersion: return true
            default: return false
            }
        }
    }

    private struct Properties {
        var isCollection: Bool?
        var contentLength: String?
        var lastModified: String?
        var etag: String?
        var preservedMtime: String?
        var preservedMtimeVersion: String?

        mutating func merge(_ other: Properties) {
            if let value = other.isCollection { isCollection = value }
            if let value = other.contentLength { contentLength = value }
            if let value = other.lastModified { lastModified = value }
            if let value = other.etag { etag = value }
            if let value = other.preservedMtime { preservedMtime = value }
            if let value = other.preservedMtimeVersion { preservedMtimeVersion = value }
        }
    }

    private struct Response {
        var hrefs: [String] = []
        var status: String?
        var propstatCount = 0
        /// Values from the 2xx propstats only.
        var properties = Properties()
    }

    private struct Propstat {
        var status: String?
        var properties = Properties()
    }

    private let matcher: DAVHref.Matcher
    private let directory: RelativePath
    private let limits: ListingLimits

    private var stack: [Node] = []
    /// `stack.last`, kept apart because it is read on every event.
    private var top: Node?
    /// Whether character data goes into `text` (the top element is one we read).
    private var collecting = false
    private var text = ""
    private var response: Response?
    private var propstat: Propstat?
    private var responseCount = 0
    private var children: [RemoteEntry] = []
    /// Names seen, as bytes: Swift compares strings canonically, and two names in
    /// different Unicode forms are two files, which the core reports (`NormalizationClash`).
    private var childNames: Set<[UInt8]> = []
    private var collectionETag: String?
    private var sawCollection = false

    private(set) var sawRoot = false
    private(set) var finished = false
    private(set) var failure: BackendError?
    /// The first error libxml2 reported: its code and line.
    private(set) var xmlError: (code: Int, line: Int)?

    /// The last status line read and its code: nearly every one is `HTTP/1.1 200 OK`.
    private var lastStatus: (line: String, code: Int?) = ("", nil)
    /// The last getlastmodified read and its value: files copied together share it.
    private var lastModified: (text: String, nanos: Int64?) = ("", nil)

    init(matcher: DAVHref.Matcher, directory: RelativePath, limits: ListingLimits) {
        self.matcher = matcher
        self.directory = directory
        self.limits = limits
    }

    func listing() -> DAVListing {
        // All children share one parent, so comparing names is enough. String's `<` (fast, and
        // the same as RelativePath's byte order for NFC names) sorts; a linear check with
        // RelativePath's own order catches the rare names where the two orders differ.
        var sorted = children.sorted { $0.path.name < $1.path.name }
        for index in sorted.indices.dropFirst()
        where !Self.bytesPrecede(sorted[index - 1].path.name, sorted[index].path.name) {
            sorted.sort { Self.bytesPrecede($0.path.name, $1.path.name) }
            break
        }
        return DAVListing(collectionETag: collectionETag, children: sorted)
    }

    /// RelativePath's order for two names: their UTF-8 bytes, compared lexicographically.
    private static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                    let order = memcmp(a, b, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    private func fail(_ parser: XMLParser, _ detail: String) {
        guard failure == nil else { return }
        failure = MultistatusParser.refusal(detail, line: parser.lineNumber, path: directory.description)
        parser.abortParsing()
    }

    // MARK: Events

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        guard failure == nil else { return }
        let isDAV = namespaceURI == WebDAVNamespace.uri
        let node: Node
        switch top {
        case nil:
            guard !sawRoot else { return }  // libxml2 reports the extra content
            sawRoot = true
            guard isDAV, elementName == "multistatus" else {
                let namespace = namespaceURI.map { $0.isEmpty ? "no namespace" : "namespace \($0.debugDescription)" }
                    ?? "no namespace"
                fail(parser, "the root element is <\(qName ?? elementName)> in \(namespace), not DAV: multistatus")
                return
            }
            node = .multistatus
        case .multistatus?:
            if isDAV, elementName == "response" {
                responseCount += 1
                // One more than maxEntries: the collection's own response.
                if responseCount > limits.maxEntries + 1 {
                    fail(parser, "the folder has more than \(limits.maxEntries) entries (the listing limit)")
                    return
                }
                response = Response()
                node = .response
            } else {
                node = .other
            }
        case .response?:
            switch isDAV ? elementName : "" {
            case "href": node = .href
            case "status": node = .responseStatus
            case "propstat":
                response?.propstatCount += 1
                propstat = Propstat()
                node = .propstat
            default: node = .other
            }
        case .propstat?:
            switch isDAV ? elementName : "" {
            case "prop": node = .prop
            case "status": node = .propstatStatus
            default: node = .other
            }
        case .prop?:
            if namespaceURI == ModificationTimeProperty.namespace {
                switch elementName {
                case ModificationTimeProperty.mtimeName: node = .preservedMtime
                case ModificationTimeProperty.versionName: node = .preservedMtimeVersion
                default: node = .other
                }
            } else {
                switch isDAV ? elementName : "" {
                case "resourcetype":
                    propstat?.properties.isCollection = false
                    node = .resourcetype
                case "getcontentlength": node = .contentLength
                case "getlastmodified": node = .lastModified
                case "getetag": node = .etag
                default: node = .other
                }
            }
        case .resourcetype?:
            if isDAV, elementName == "collection" {
                propstat?.properties.isCollection = true
            }
            node = .other
        default:
            node = .other
        }
        if node.collectsText { text = "" }
        stack.append(node)
        top = node
        collecting = node.collectsText
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        guard failure == nil, let node = stack.popLast() else { return }
        top = stack.last
        collecting = top?.collectsText ?? false
        switch node {
        case .multistatus: finished = true
        case .response: finishResponse(parser)
        case .href: response?.hrefs.append(text)
        case .responseStatus: response?.status = text
        case .propstat: finishPropstat(parser)
        case .propstatStatus: propstat?.status = text
        case .contentLength: propstat?.properties.contentLength = text
        case .lastModified: propstat?.properties.lastModified = text
        case .etag: propstat?.properties.etag = text
        case .preservedMtime: propstat?.properties.preservedMtime = text
        case .preservedMtimeVersion: propstat?.properties.preservedMtimeVersion = text
        case .prop, .resourcetype, .other: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if collecting, failure == nil { text += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if collecting, failure == nil { text += String(decoding: CDATABlock, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        nil
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        let code = (parseError as NSError).code
        // libxml2's warnings (XML_WAR_*) are reported here too; they do not make a document ill-formed.
        guard xmlError == nil, !XMLProlog.libxml2Warnings.contains(code) else { return }
        xmlError = (code, parser.lineNumber)
        parser.abortParsing()
    }

    // MARK: Responses

    private func finishPropstat(_ parser: XMLParser) {
        guard let block = propstat else { return }
        propstat = nil
        guard let status = block.status else {
            fail(parser, "a <propstat> has no <status>")
            return
        }
        guard let code = statusCode(status) else {
            fail(parser, "unreadable propstat status \(status.debugDescription)")
            return
        }
        if (200..<300).contains(code) {
            response?.properties.merge(block.properties)
        }
    }

    private func finishResponse(_ parser: XMLParser) {
        guard let current = response else { return }
        response = nil
        guard !current.hrefs.isEmpty else {
            fail(parser, "a <response> has no <href>")
            return
        }
        if current.propstatCount == 0 {
            guard let status = current.status else {
                fail(parser, "a <response> has neither <propstat> nor <status>")
                return
            }
            guard let code = statusCode(status) else {
                fail(parser, "unreadable response status \(status.debugDescription)")
                return
            }
            // e.g. a member that could not be read (403) or vanished meanwhile (404).
            guard (200..<300).contains(code) else { return }
            for href in current.hrefs {
                accept(parser, href: href, properties: Properties())
                if failure != nil { return }
            }
        } else {
            guard current.hrefs.count == 1 else {
                fail(parser, "a <response> with <propstat> has \(current.hrefs.count) <href> elements")
                return
            }
            accept(parser, href: current.hrefs[0], properties: current.properties)
        }
    }

    private func accept(_ parser: XMLParser, href: String, properties: Properties) {
        let target: DAVHref.Target
        do {
            target = try matcher.classify(href)
        } catch {
            fail(parser, "the href \(trimXML(href).debugDescription) \(error.reason)")
            return
        }
        let etag = properties.etag.map { String(trimXML($0)) }.flatMap { $0.isEmpty ? nil : $0 }

        switch target {
        case .collection:
            guard !sawCollection else {
                fail(parser, "the folder itself is described twice")
                return
            }
            sawCollection = true
            if properties.isCollection == false {
                fail(parser, "the server describes the listed folder as a file, not a collection")
                return
            }
            collectionETag = etag

        case .member(let name, let trailingSlash):
            let kind: RemoteEntry.Kind
            if let isCollection = properties.isCollection {
                kind = isCollection ? .directory : .file
            } else {
                // No resourcetype in a 2xx propstat: a trailing slash is the only hint.
                kind = trailingSlash ? .directory : .file
            }
            if trailingSlash, kind == .file {
                fail(parser, "the href \(trimXML(href).debugDescription) ends with a slash but is not a collection")
                return
            }
            let path: RelativePath
            do {
                path = try directory.appending(name)
            } catch {
                fail(parser, "the href \(trimXML(href).debugDescription) has an invalid name: \(error.message)")
                return
            }
            guard childNames.insert(Array(name.utf8)).inserted else {
                fail(parser, "the name \(name.debugDescription) appears twice")
                return
            }
            var size: Int64 = 0
            if kind == .file {
                guard let text = properties.contentLength else {
                    fail(parser, "the file \(name.debugDescription) has no getcontentlength")
                    return
                }
                let digits = trimXML(text)
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                      let value = Int64(digits) else {
                    fail(parser, "the file \(name.debugDescription) has an invalid getcontentlength "
                         + text.debugDescription)
                    return
                }
                size = value
            }
            var modified: Int64?
            if let text = properties.lastModified {
                if text != lastModified.text { lastModified = (text, HTTPDate.parse(text)) }
                modified = lastModified.nanos
            }
            if kind == .file, let preserved = preservedModificationTime(properties, size: size, lastModified: modified, etag: etag) {
                modified = preserved
            }
            children.append(RemoteEntry(path: path, kind: kind, size: size, modifiedNanos: modified, etag: etag))
            if children.count > limits.maxEntries {
                fail(parser, "the folder has more than \(limits.maxEntries) entries (the listing limit)")
            }
        }
    }

    /// Ferry's `mtime` property, when the file is still the version it was set for.
    private func preservedModificationTime(_ properties: Properties, size: Int64, lastModified: Int64?,
                                           etag: String?) -> Int64? {
        guard let text = properties.preservedMtime, let version = properties.preservedMtimeVersion,
              let nanos = ModificationTimeProperty.parse(trimXML(text)),
              let current = ModificationTimeProperty.versionStamp(size: size, lastModifiedNanos: lastModified, etag: etag),
              trimXML(version) == current[...] else { return nil }
        return nanos
    }

    /// The code of a status line such as `HTTP/1.1 200 OK`.
    private func statusCode(_ line: String) -> Int? {
        if line == lastStatus.line { return lastStatus.code }
        let code = Self.parseStatusCode(line)
        lastStatus = (line, code)
        return code
    }

    private static func parseStatusCode(_ line: String) -> Int? {
        let parts = trimXML(line).split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3,
              parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(parts[1])
    }
}

/// Drops XML white space (space, tab, CR, LF) at both ends.
private func trimXML(_ text: String) -> Substring {
    // Most values come without surrounding white space.
    if let first = text.utf8.first, let last = text.utf8.last, !isXMLSpace(first), !isXMLSpace(last) {
        return text[...]
    }
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
    guard let start = text.firstIndex(where: { !isSpace($0) }),
          let end = text.lastIndex(where: { !isSpace($0) }) else { return "" }
    return text[start...end]
}

private func isXMLSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}

// MARK: - hrefs

/// Checks an `<href>` against the listed collection.
enum DAVHref {
    enum Target: Equatable, Sendable {
        /// The listed collection itself.
        case collection
        /// A direct member: its decoded name, and whether the href ended with a slash.
        case member(name: String, trailingSlash: Bool)
    }

    struct Refusal: Error {
        var reason: String
    }

    /// Classifies the hrefs of one listing. Hrefs that start with the request path byte for
    /// byte (the usual case) skip decoding the collection's part again.
    struct Matcher: Sendable {
        /// The collection's decoded segments.
        let collection: [String]
        /// The request path as sent, ending with one slash.
        private let prefix: [UInt8]

        init(requestPath: String) throws(Refusal) {
            collection = try DAVHref.segments(ofPath: Substring(requestPath)).segments
            var prefix = Array(requestPath.utf8)
            if prefix.last != UInt8(ascii: "/") { prefix.append(UInt8(ascii: "/")) }
            self.prefix = prefix
        }

        func classify(_ href: String) throws(Refusal) -> Target {
            if let member = directMember(href) {
                guard let name = DAVHref.percentDecode(member.name[...]) else {
                    throw Refusal(reason: "has an invalid percent-encoding or is not UTF-8 in "
                                  + member.name.debugDescription)
                }
                if name == "." || name == ".." {
                    throw Refusal(reason: "has a \(name.debugDescription) segment")
                }
                return .member(name: name, trailingSlash: member.trailingSlash)
            }
            return try DAVHref.classify(href, collection: collection)
        }

        /// The still-encoded name when `href` is the request path, byte for byte, followed by
        /// one plain segment (and perhaps a slash); nil sends the href the long way.
        private func directMember(_ href: String) -> (name: String, trailingSlash: Bool)? {
            var href = href
            return href.withUTF8 { bytes -> (name: String, trailingSlash: Bool)? in
                var start = 0, end = bytes.count
                while start < end, isXMLSpace(bytes[start]) { start += 1 }
                while end > start, isXMLSpace(bytes[end - 1]) { end -= 1 }
                guard end - start > prefix.count else { return nil }
                for offset in 0..<prefix.count where bytes[start + offset] != prefix[offset] { return nil }
                start += prefix.count
                var trailingSlash = false
                if bytes[end - 1] == UInt8(ascii: "/") {
                    trailingSlash = true
                    end -= 1
                }
                guard start < end else { return nil }
                for index in start..<end {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                        return nil
                    }
                }
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                return (name, trailingSlash)
            }
        }
    }

    /// Where an href points relative to the collection whose decoded path segments are
    /// `collection`. The href is an absolute path (`/dav/a%20b/x.jpg`) or an http(s) URL
    /// whose scheme and authority are ignored; anything but the collection itself or
    /// one direct member is refused.
    static func classify(_ href: String, collection: [String]) throws(Refusal) -> Target {
        let trimmed = trimXML(href)
        guard !trimmed.isEmpty else { throw Refusal(reason: "is empty") }
        let (segments, trailingSlash) = try self.segments(ofPath: try path(of: trimmed))
        if segments.count == collection.count, segments == collection {
            return .collection
        }
        if segments.count == collection.count + 1, segments.dropLast().elementsEqual(collection),
           let name = segments.last {
            return .member(name: name, trailingSlash: trailingSlash)
        }
        throw Refusal(reason: "is neither the listed folder nor one of its direct members")
    }

    /// The path part of an href: itself when it is an absolute path, the part after
    /// `scheme://authority` when it is an http(s) URL.
    static func path(of href: Substring) throws(Refusal) -> Substring {
        let path: Substring
        if href.hasPrefix("/") {
            guard !href.hasPrefix("//") else { throw Refusal(reason: "is a network-path reference (//host/…)") }
            path = href
        } else if let separator = href.range(of: "://") {
            let scheme = href[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw Refusal(reason: "has the scheme \(scheme.debugDescription), not http or https")
            }
            let rest = href[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            guard slash > rest.startIndex else { throw Refusal(reason: "is a URL without a host") }
            path = slash == rest.endIndex ? "/" : rest[slash...]
        } else {
            throw Refusal(reason: "is neither an absolute path nor an http(s) URL")
        }
        guard !path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            throw Refusal(reason: "has a query or a fragment")
        }
        return path
    }

    /// The percent-decoded segments of an absolute URL path; one trailing slash is not a
    /// segment (`/a/b/` and `/a/b` both give `["a", "b"]`; `/` gives none).
    static func segments(ofPath path: Substring) throws(Refusal) -> (segments: [String], trailingSlash: Bool) {
        guard path.hasPrefix("/") else { throw Refusal(reason: "is not an absolute path") }
        var body = path.dropFirst()
        if body.isEmpty { return ([], true) }
        var trailingSlash = false
        if body.hasSuffix("/") {
            trailingSlash = true
            body = body.dropLast()
        }
        var segments: [String] = []
        for raw in body.split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = percentDecode(raw) else {
                throw Refusal(reason: "has an invalid percent-encoding or is not UTF-8 in "
                              + String(raw).debugDescription)
            }
            if segment == "." || segment == ".." {
                throw Refusal(reason: "has a \(segment.debugDescription) segment")
            }
            segments.append(segment)
        }
        return (segments, trailingSlash)
    }

    /// Strict percent-decoding (shared with the HTTP backend's index parsers).
    static func percentDecode(_ text: Substring) -> String? {
        PercentEncoding.decode(text)
    }
}

// MARK: - Prolog

/// Looks at what comes before the root element, before libxml2 sees the document.
///
/// A multistatus body never needs a document type declaration, and a DTD is the only way
/// to define entities, so refusing `<!DOCTYPE` here rules out entity expansion bombs and
/// external entities whatever libxml2's own protections are. Only UTF-8 (or ASCII) is
/// accepted: a DTD cannot then hide in an encoding this byte-level check would not read
/// (UTF-7, EBCDIC, UTF-32), and libxml2 2.9 crashed switching to others (UTF-16 fed in
/// chunks, iso8859-8, utf-7: found by fuzzing). WebDAV servers answer in UTF-8.
enum XMLProlog {
    /// Why the document is refused, or nil to let the XML parser judge it.
    static func problem(in body: Data) -> String? {
        body.withUnsafeBytes { problem(in: $0) }
    }

    private static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        func starts(with prefix: [UInt8]) -> Bool {
            bytes.count >= prefix.count && zip(bytes, prefix).allSatisfy { $0 == $1 }
        }
        let start: Int
        if starts(with: [0xEF, 0xBB, 0xBF]) {
            start = 3
        } else if starts(with: [0xFF, 0xFE, 0x00, 0x00]) || starts(with: [0x00, 0x00])
                    || starts(with: [0x3C, 0x00, 0x00, 0x00]) {
            return "the PROPFIND response is encoded in UTF-32, which is not accepted"
        } else if starts(with: [0x4C, 0x6F, 0xA7, 0x94]) {
            return "the PROPFIND response is encoded in EBCDIC, which is not accepted"
        } else if starts(with: [0xFE, 0xFF]) || starts(with: [0xFF, 0xFE]) || starts(with: [0x00, 0x3C])
                    || starts(with: [0x3C, 0x00]) {
            return "the PROPFIND response is encoded in UTF-16, which is not accepted (WebDAV servers answer in UTF-8)"
        } else {
            start = 0
        }
        let count = bytes.count - start

        func unit(_ index: Int) -> UInt8 { bytes[start + index] }
        func matches(_ index: Int, _ text: String) -> Bool {
            var index = index
            for byte in text.utf8 {
                guard index < count, unit(index) == byte else { return false }
                index += 1
            }
            return true
        }
        func find(_ text: String, from index: Int) -> Int? {
            var index = index
            while index < count {
                if matches(index, text) { return index }
                index += 1
            }
            return nil
        }

        var index = 0
        while index < count {
            let current = unit(index)
            if current == 0x20 || current == 0x09 || current == 0x0A || current == 0x0D {
                index += 1
            } else if matches(index, "<?") {
                // An unclosed declaration still reaches libxml2's encoding switch, which
                // crashed on `encoding="utf-7"` (found by fuzzing): refuse it here.
                guard let end = find("?>", from: index + 2) else {
                    return "the PROPFIND response's XML declaration is not closed"
                }
                let isDeclaration = matches(index, "<?xml") && index + 5 < count
                    && [0x20, 0x09, 0x0A, 0x0D].contains(unit(index + 5))
                // Foundation's XMLParser on Linux dereferences NULL for a processing
                // instruction without data (`<?x?>`; found by fuzzing): no listing needs one.
                guard isDeclaration else { return Self.processingInstruction }
                var declaration = ""
                for position in (index + 5)..<end {
                    let value = unit(position)
                    guard value < 0x80 else { return "the XML declaration has non-ASCII characters" }
                    declaration.unicodeScalars.append(Unicode.Scalar(value))
                }
                if let problem = encodingProblem(declaration) { return problem }
                index = end + 2
            } else if matches(index, "<!--") {
                guard let end = find("-->", from: index + 4) else { return nil }
                index = end + 3
            } else if matches(index, "<!") {
                return "the PROPFIND response has a document type declaration (<!DOCTYPE …>); "
                    + "DTDs and entities are not accepted"
            } else {
                // The root element, or text that the XML parser reports. No processing
                // instruction may follow anywhere (see above).
                return find("<?", from: index) == nil ? nil : Self.processingInstruction
            }
        }
        return nil
    }

    static let processingInstruction = "the PROPFIND response has a processing instruction (<?…?>), which is not accepted"

    /// Checks the `encoding="…"` of an XML declaration (the part after `<?xml`).
    private static func encodingProblem(_ declaration: String) -> String? {
        guard let key = declaration.range(of: "encoding") else { return nil }
        var rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard rest.first == "=" else { return "the XML declaration is malformed" }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "the XML declaration is malformed" }
        let value = rest.dropFirst().prefix { $0 != quote }.lowercased()
        // Only UTF-8 (and its subset ASCII): libxml2 2.9's switch to another encoding
        // crashed on a declared iso8859-8 and utf-7 (found by fuzzing), and servers answer in UTF-8.
        let accepted = ["utf-8", "utf8", "us-ascii", "ascii"].contains(value)
        return accepted
            ? nil : "the PROPFIND response declares the encoding \(value.debugDescription), which is not accepted"
    }

    /// libxml2 codes (`xmlParserErrors`) that are warnings, not well-formedness errors.
    static let libxml2Warnings: Set<Int> = [93, 97, 98, 99, 100, 102]

    /// A short text for the libxml2 error codes that broken listings produce.
    static func describe(libxml2Code code: Int) -> String {
        switch code {
        case 4: return "it does not start with an element (empty, or not XML)"
        case 5: return "the document ends too early or has content after the root element"
        case 9: return "an invalid character"
        case 26: return "an undefined entity"
        case 31, 32: return "an unsupported encoding"
        case 41: return "an attribute without a value"
        case 68: return "a name was expected"
        case 73: return "'>' was expected"
        case 76: return "an end tag does not match its start tag"
        case 77: return "an unfinished tag"
        case 85: return "the tags are not balanced"
        case 86: return "content after the root element"
        case 89: return "an entity reference loop"
        case 201: return "an undeclared namespace prefix"
        default: return "libxml2 error \(code)"
        }
    }
}
