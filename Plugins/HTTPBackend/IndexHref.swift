import CurlTransport
import FerryPluginAPI

/// Where a link in an HTML folder index points, relative to the folder that was listed.
///
/// Index pages link to more than their members, so links fall into three groups:
/// - navigation, skipped: the folder itself (sort links such as `?C=N;O=D`, fragments),
///   its parent (`../`, Apache's absolute `/files/`) or any other ancestor;
/// - a direct member of the folder: relative (`a%20b.jpg`, `./a:b.jpg`, `sub/`), an
///   absolute path, or a URL on the same server;
/// - anything else makes the whole index suspect and is refused: another server or
///   scheme, a path outside the folder, a deeper path, a member link with a query, names
///   that decode to `.`, `..`, a slash or a control character, broken percent-encoding.
///
/// Paths are compared after resolving `.`/`..` segments (RFC 3986 §5.2.4) and
/// percent-decoding each segment, so `%C3%A9` and `%c3%a9` name the same member.
enum IndexHref {
    enum Target: Equatable, Sendable {
        case navigation
        /// A direct member: its decoded name, and whether the link ended with a slash.
        case member(name: String, isFolder: Bool)
    }

    struct Refusal: Error, Equatable {
        var reason: String
    }

    /// Classifies `href` (character references already decoded) from the index of the
    /// folder whose percent-encoded path is `folderPath` (starting and ending with `/`)
    /// on `origin` (`scheme://host[:port]`).
    static func classify(_ href: String, origin: String, folderPath: String) throws(Refusal) -> Target {
        let trimmed = trimmingBlanks(href)
        if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("?") { return .navigation }
        if trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw Refusal(reason: "has a control character")
        }
        var reference = trimmed[...]
        var hasQuery = false
        if let end = reference.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            reference = reference[..<end]
            hasQuery = true
        }

        let path: String
        if let scheme = scheme(of: reference) {
            guard scheme == "http" || scheme == "https" else {
                throw Refusal(reason: "uses the scheme \(scheme.debugDescription), not http or https")
            }
            let afterScheme = reference.dropFirst(scheme.count + 1)
            guard afterScheme.hasPrefix("//") else { throw Refusal(reason: "is a URL without a host") }
            path = try samePath(afterScheme.dropFirst(2), scheme: scheme, origin: origin)
        } else if reference.hasPrefix("//") {
            let originScheme = origin.prefix { $0 != ":" }.lowercased()
            path = try samePath(reference.dropFirst(2), scheme: originScheme, origin: origin)
        } else if reference.hasPrefix("/") {
            path = String(reference)
        } else {
            path = folderPath + reference
        }

        let (segments, isFolder) = try resolvedSegments(path)
        let folder = try resolvedSegments(folderPath).segments
        if segments.count <= folder.count, segments.elementsEqual(folder.prefix(segments.count)) {
            return .navigation
        }
        guard segments.starts(with: folder) else {
            throw Refusal(reason: "points outside the listed folder")
        }
        guard segments.count == folder.count + 1, let name = segments.last else {
            throw Refusal(reason: "points below a subfolder, not to a member of the listed folder")
        }
        guard !hasQuery else { throw Refusal(reason: "links to a member with a query or fragment") }
        do {
            try RelativePath.validate(name: name, in: name)
        } catch {
            throw Refusal(reason: "names \(name.debugDescription), which is not a valid file name (\(error.message))")
        }
        return .member(name: name, isFolder: isFolder)
    }

    /// Whether two absolute http(s) URLs name the same folder or file once libcurl's
    /// normalisation is undone: origins compared as `normalizedOrigin`, paths after
    /// resolving dot segments and percent-decoding, the trailing slash included.
    static func sameLocation(_ first: String, _ second: String) -> Bool {
        func split(_ url: String) -> (origin: String, path: String)? {
            guard let separator = url.range(of: "://") else { return nil }
            let rest = url[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let path = slash == rest.endIndex ? "/" : String(rest[slash...])
            return (String(url[..<slash]), path)
        }
        guard let a = split(first), let b = split(second),
              normalizedOrigin(a.origin) == normalizedOrigin(b.origin),
              let left = try? resolvedSegments(a.path), let right = try? resolvedSegments(b.path) else { return false }
        return left.segments == right.segments && left.isFolder == right.isFolder
    }

    /// The path of a URL after `scheme://`, provided its authority is the listed server's.
    private static func samePath(_ rest: Substring, scheme: String, origin: String) throws(Refusal) -> String {
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard !authority.isEmpty else { throw Refusal(reason: "is a URL without a host") }
        guard !authority.contains("@") else { throw Refusal(reason: "is a URL with credentials in it") }
        guard normalizedOrigin(scheme + "://" + authority) == normalizedOrigin(origin) else {
            throw Refusal(reason: "points to another server (\(scheme)://\(authority))")
        }
        return slash == rest.endIndex ? "/" : String(rest[slash...])
    }

    /// `scheme://host:port` in lower case, with the scheme's default port spelled out.
    static func normalizedOrigin(_ origin: String) -> String {
        let lowered = origin.lowercased()
        guard let separator = lowered.range(of: "://") else { return lowered }
        let scheme = lowered[..<separator.lowerBound]
        let authority = lowered[separator.upperBound...]
        // A port is what follows the last colon, unless that colon is inside an IPv6 `[…]`.
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") { return lowered }
        let port = scheme == "https" ? "443" : "80"
        return lowered + ":" + port
    }

    /// The scheme of an absolute URL (`http:`, `mailto:`), lower-cased; nil for a
    /// relative reference. A colon after a slash does not make a scheme.
    private static func scheme(of reference: Substring) -> String? {
        guard let colon = reference.firstIndex(of: ":") else { return nil }
        let candidate = reference[..<colon]
        guard let first = candidate.unicodeScalars.first, isASCIILetter(first),
              candidate.unicodeScalars.allSatisfy({
                  isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "."
              })
        else { return nil }
        return candidate.lowercased()
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// The decoded segments of an absolute path once `.` and `..` are resolved, and
    /// whether it ends with a slash. `..` above the root stays at the root (RFC 3986).
    static func resolvedSegments(_ path: String) throws(Refusal) -> (segments: [String], isFolder: Bool) {
        let raw = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var segments: [String] = []
        var isFolder = false
        for (index, part) in raw.enumerated() {
            let isLast = index == raw.count - 1
            switch part {
            case ".":
                isFolder = isLast
            case "..":
                if !segments.isEmpty { segments.removeLast() }
                isFolder = isLast
            case "":
                guard isLast else { throw Refusal(reason: "has an empty path segment (//)") }
                isFolder = true
            default:
                guard let decoded = PercentEncoding.decode(part) else {
                    throw Refusal(reason: "has an invalid percent-encoding or is not UTF-8 in \(String(part).debugDescription)")
                }
                segments.append(decoded)
                isFolder = false
            }
        }
        return (segments, isFolder)
    }

    /// Drops HTML's white space (space, tab, LF, FF, CR) at both ends, as browsers do with URLs.
    private static func trimmingBlanks(_ text: String) -> String {
        let isBlank: (Unicode.Scalar) -> Bool = { [" ", "\t", "\n", "\u{0C}", "\r"].contains($0) }
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isBlank($0) }),
              let end = scalars.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(scalars[start...end])
    }
}
