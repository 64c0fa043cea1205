import FerryPluginAPI
import Foundation

/// Reads an HTML folder index (Apache `mod_autoindex`, nginx `autoindex`,
/// `python3 -m http.server`, and pages like them): every link is classified by
/// `IndexHref`, navigation links are skipped, direct members become entries named after
/// their decoded link (the link text is often cut short, the link never is), folders by
/// their trailing slash.
///
/// HTML indexes give no exact sizes (Apache and nginx round them, or show none), so the
/// entries have none; the backend asks for each file's size with `HEAD`.
///
/// The whole index is refused (`protocolViolation`) for any link `IndexHref` refuses, a
/// page `HTMLLinkExtractor` cannot read, a name listed both as a file and as a folder, or
/// an index larger than `IndexLimits` allow. The same link twice (an icon and a name
/// linking to one file) is one entry.
public enum HTMLIndexParser {
    /// Parses the index of the folder at `folderPath` (percent-encoded, as requested) on
    /// `origin`, which is `directory` below the backend's root.
    public static func parse(_ body: Data, origin: String, folderPath: String, directory: RelativePath,
                      limits: IndexLimits) throws(BackendError) -> [IndexEntry] {
        guard body.count <= limits.maxBytes else {
            throw IndexRefusal.error("the index is \(body.count) bytes, more than the limit of \(limits.maxBytes)",
                                     directory: directory)
        }
        let hrefs: [String]
        do {
            hrefs = try HTMLLinkExtractor.hrefs(in: body)
        } catch {
            throw IndexRefusal.error(error.reason, directory: directory)
        }
        var entries: [IndexEntry] = []
        var kinds: [String: RemoteEntry.Kind] = [:]
        for href in hrefs {
            let target: IndexHref.Target
            do {
                target = try IndexHref.classify(href, origin: origin, folderPath: folderPath)
            } catch {
                throw IndexRefusal.error("the link \(href.debugDescription) \(error.reason)", directory: directory)
            }
            guard case let .member(name, isFolder) = target else { continue }
            let kind: RemoteEntry.Kind = isFolder ? .directory : .file
            if let known = kinds[name] {
                guard known == kind else {
                    throw IndexRefusal.error("the name \(name.debugDescription) is listed both as a file and as a folder",
                                             directory: directory)
                }
                continue
            }
            kinds[name] = kind
            entries.append(IndexEntry(name: name, kind: kind))
            guard entries.count <= limits.maxEntries else {
                throw IndexRefusal.error("the folder has more than \(limits.maxEntries) entries (the listing limit)",
                                         directory: directory)
            }
        }
        return entries
    }
}
