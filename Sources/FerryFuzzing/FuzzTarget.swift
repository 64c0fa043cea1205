import ExecBackend
import FerryBundles
import FerryConfig
import FerryCore
import FerryJournal
import FerryPluginAPI
import Foundation
import HTTPBackend
import LocalBackend
import WebDAVBackend

/// A parser that reads untrusted input, as a function of arbitrary bytes. Both the
/// libFuzzer binary (`make fuzz`) and the bounded fuzz test in `make test` call these.
///
/// A target must return for every input: refusing it with an error is fine, crashing,
/// hanging or growing without bound is the bug being looked for.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// config.yml: Yams, then Ferry's reader of every key.
    case config
    /// A WebDAV `PROPFIND Depth: 1` answer, with small listing limits.
    case multistatus
    /// An nginx `autoindex_format json` folder index (the http backend).
    case jsonIndex = "json-index"
    /// An HTML folder index: Apache, nginx, python's http.server (the http backend).
    case htmlIndex = "html-index"
    /// One line from an external plugin (hello, reply with entries, progress, error).
    case pluginMessage = "plugin-message"
    /// An archive bundle's manifest from a remote, then the catalog's checks of its paths.
    case bundleManifest = "bundle-manifest"

    public func run(_ input: Data) {
        switch self {
        case .config:
            _ = try? Self.configLoader.parse(String(decoding: input, as: UTF8.self), file: "fuzz.yml", baseDirectory: "/fuzz")
        case .multistatus:
            _ = try? MultistatusParser.parse(input, requestPath: "/dav/photos/", directory: Self.photos, limits: Self.limits)
        case .jsonIndex:
            _ = try? JSONIndexParser.parse(input, directory: Self.photos, limits: Self.indexLimits)
        case .htmlIndex:
            _ = try? HTMLIndexParser.parse(input, origin: "http://127.0.0.1:8080", folderPath: "/files/Alps%202024/",
                                           directory: Self.photos, limits: Self.indexLimits)
        case .pluginMessage:
            _ = PluginLineCheck.accepts([UInt8](input))
        case .bundleManifest:
            let name = "bundle-20261122T230501Z-3fa2c4d1.tar.zst"
            guard let manifest = try? BundleManifest.decode(input, name: name + ".manifest.json") else { return }
            var catalog = BundleCatalog()
            let record = BundleRecord(pairId: 1, name: name, format: manifest.format, size: manifest.size, manifestSize: 0,
                                      manifestModifiedNanos: nil, createdAt: manifest.createdAt)
            catalog.add(record, file: RemoteEntry(path: Self.photos, kind: .file, size: 0, modifiedNanos: nil), members: manifest.members.map {
                BundleMemberRecord(pairId: 1, bundle: name, path: $0.path, entryName: $0.entry, size: $0.size,
                                   modifiedNanos: $0.modifiedNanos, sha256: $0.sha256, stale: false)
            })
            var remote: [String: RemoteEntry] = [:]
            catalog.addVirtualEntries(to: &remote, root: Self.photos)
        }
    }

    static let configLoader = ConfigLoader(registry: BackendRegistry([LocalBackend.plugin, WebDAVBackend.plugin, HTTPBackend.plugin],
                                                                         families: [ExecBackend.family]))
    static let photos = try! RelativePath("photos")
    static let limits = ListingLimits(maxBytes: 1 << 20, maxEntries: 10_000)
    static let indexLimits = IndexLimits(maxBytes: 1 << 20, maxEntries: 10_000)

    /// Tokens that make a mutation hit the parser's interesting paths sooner.
    public var dictionary: [String] {
        switch self {
        case .config:
            return [": ", "- ", "\n  ", "&a ", "*a", "!!str ", "!!binary ", "{", "}", "[", "]", "---\n", "...\n", "\"", "'",
                    "remotes:", "folders:", "queues:", "type: webdav", "type: local", "type: exec:x", "url: ", "path: ", "match: ",
                    "max_size: ", "1G", "5m", "50%", "retry:", "transfers:", "scan:", "ignore: ", "**/", "{a,b}", "\t", "\u{0}"]
        case .multistatus:
            return ["<D:response>", "</D:response>", "<D:href>", "</D:href>", "<D:propstat>", "<D:status>HTTP/1.1 200 OK</D:status>",
                    "<D:status>HTTP/1.1 404 Not Found</D:status>", "<D:getcontentlength>", "<D:resourcetype><D:collection/></D:resourcetype>",
                    "<D:getlastmodified>", "<D:getetag>", "xmlns:D=\"DAV:\"", "xmlns=\"DAV:\"", "/dav/photos/", "/dav/photos/../",
                    "%2F", "%00", "%", "..", "&amp;", "&#0;", "&#x1F;", "<!DOCTYPE x [<!ENTITY a \"aaaa\">]>", "&a;", "<![CDATA[",
                    "]]>", "<?xml version=\"1.0\"?>", "http://127.0.0.1/dav/photos/", "//evil/", "\u{0}"]
        case .jsonIndex:
            return ["[", "]", "{", "}", ",", "\"name\":", "\"type\":\"file\"", "\"type\":\"directory\"", "\"type\":\"other\"",
                    "\"mtime\":\"Sun, 22 Nov 2026 20:32:30 GMT\"", "\"size\":", "-1", "1e308", "\"..\"", "\"a/b\"", "\\u0000",
                    "\\ud800", "null", "true", "\"\""]
        case .htmlIndex:
            return ["<a href=\"", "\">", "</a>", "<A HREF=", "../", "/files/Alps%202024/", "?C=N;O=D", "#top", "http://evil/",
                    "//evil/x", "%2F", "%2e%2e/", "&amp;", "&#47;", "&#x2F;", "<!--", "-->", "<script>", "</script>", "<base href=\"/\">",
                    "<title>", "<textarea>", "'", "\"", "\u{0}", "<pre>", "sub/"]
        case .pluginMessage:
            return ["{", "}", "[", "]", ",", ":", "\"type\":\"hello\"", "\"type\":\"reply\"", "\"type\":\"progress\"",
                    "\"protocol\":{\"min\":1,\"max\":1}", "\"entries\":", "\"entry\":", "\"kind\":\"file\"", "\"kind\":\"dir\"",
                    "\"path\":\"a/b\"", "\"../\"", "\"size\":", "\"modified_ns\":", "\"etag\":", "\"error\":{\"class\":\"retryable\"",
                    "\"code\":\"not_found\"", "\"max_concurrency\":", "-1", "1e308", "9223372036854775807", "null", "true",
                    "\\u0000", "\\ud800", "\"\""]
        case .bundleManifest:
            return ["{", "}", "[", "]", ",", "\"members\":", "\"path\":", "\"entry\":", "\"size\":", "\"modifiedNanos\":",
                    "\"sha256\":", "\"../x\"", "\"/etc/passwd\"", "\".ferry-bundles/x\"", "\"a//b\"", "\\u0000", "-1",
                    "9223372036854775807", "1e308", "null", "\"ferryBundleManifest\":1"]
        }
    }
}
