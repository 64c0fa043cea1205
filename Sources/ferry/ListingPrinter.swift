import ArchiveCodec
import FerryBundles
import FerryConfig
import FerryCore
import FerryPluginAPI
import Foundation

/// How `ferry ls` shows what it found: a line per entry (size, time, name), archive members
/// indented below their archive, or one JSON object each with `--json`.
struct ListingPrinter {
    var json: Bool
    /// Set when the listing is the journal's (`RemoteListingQuery.Answer.asOf`).
    var asOf: Double??

    func entry(_ entry: RemoteEntry, named name: String) {
        guard json else {
            let size = entry.kind == .directory ? "-" : ByteFormat.string(entry.size)
            StandardStreams.output(size.leftPadded(11) + "  " + (entry.modifiedNanos.map(Self.time) ?? "-") + "  "
                + name + (entry.kind == .directory ? "/" : ""))
            return
        }
        var object = JSONObject()
        object.add("path", name)
        object.add("kind", entry.kind.rawValue)
        object.add("size", entry.size)
        object.add("modified", entry.modifiedNanos.map(Self.time))
        object.add("etag", entry.etag)
        if let asOf {
            object.add("cached", true)
            object.add("as_of", asOf.map { Date(timeIntervalSince1970: $0).ISO8601Format() })
        }
        StandardStreams.output(object.text)
    }

    /// One member below its archive's line: indented in text, `archive` + `member` in JSON.
    /// Links and names that would be refused on extraction are marked.
    func member(_ member: ArchiveEntry, of archive: String) {
        let refusal = ArchiveContents.refusalReason(for: member)
        guard json else {
            let size = member.kind == .file ? member.size.map(ByteFormat.string) ?? "?" : "-"
            var line = size.leftPadded(11) + "  " + (member.modifiedNanos.map(Self.time) ?? "-") + "    " + archive + " » " + member.name
            if member.kind == .directory && !member.name.hasSuffix("/") { line += "/" }
            if let target = member.linkTarget { line += " -> " + target }
            if let refusal { line += "  (\(refusal))" }
            StandardStreams.output(line)
            return
        }
        var object = JSONObject()
        object.add("path", archive)
        object.add("member", member.name)
        object.add("kind", member.kind.rawValue)
        if let size = member.size { object.add("size", size) }
        object.add("modified", member.modifiedNanos.map(Self.time))
        object.add("link_target", member.linkTarget)
        object.add("refused", refusal)
        StandardStreams.output(object.text)
    }

    /// Said on standard error before a listing that is the journal's.
    static func staleNotice(asOf: Double?, cached: Bool) -> String {
        let when = asOf.map { Date(timeIntervalSince1970: $0).ISO8601Format() } ?? "an unknown time"
        return "ferry: as of \(when) (\(cached ? "from the journal" : "offline")); files added or changed on the remote since are not shown"
    }

    private static func time(_ nanos: Int64) -> String {
        Date(timeIntervalSince1970: Double(nanos) / 1e9).ISO8601Format()
    }
}
