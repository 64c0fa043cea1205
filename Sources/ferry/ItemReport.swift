import FerryCore

/// `ferry status --items`: media items counted by status, and every item that is not in
/// sync listed with its files.
struct ItemReport {
    var items: [MediaItem]

    /// Items listed one per line in text; the rest are counted (`--json` lists all).
    static let listedItems = 50

    private var unsettled: [MediaItem] { items.filter { $0.status != .inSync } }

    private var counts: [(MediaItemStatus, Int, Int64)] {
        MediaItemStatus.allCases.compactMap { status in
            let matching = items.filter { $0.status == status }
            return matching.isEmpty ? nil : (status, matching.count, matching.reduce(0) { $0 + $1.bytes })
        }
    }

    var lines: [String] {
        var lines = ["  items:"]
        if items.isEmpty { lines.append("    none") }
        for (status, count, bytes) in counts {
            lines.append("    " + StatusWords.item(status).padding(toLength: 12, withPad: " ", startingAt: 0)
                + Plural.count(count, "item").leftPadded(12) + "  " + ByteFormat.string(bytes).leftPadded(10))
        }
        for item in unsettled.prefix(Self.listedItems) {
            let files = item.files.map { "\($0.path) (\(StatusWords.file($0.status)))" }.joined(separator: ", ")
            lines.append("    \(StatusWords.item(item.status)): \(item.key): \(files)")
        }
        if unsettled.count > Self.listedItems {
            lines.append("    … and \(unsettled.count - Self.listedItems) more (all of them with --json)")
        }
        return lines
    }

    var json: JSONObject {
        var object = JSONObject()
        var statuses = JSONObject()
        for (status, count, bytes) in counts {
            var entry = JSONObject()
            entry.add("items", count)
            entry.add("bytes", bytes)
            statuses.add(status.rawValue, entry)
        }
        object.add("statuses", statuses)
        object.add("unsettled", unsettled.map { item in
            var entry = JSONObject()
            entry.add("item", item.key)
            entry.add("status", item.status.rawValue)
            entry.add("files", item.files.map { file in
                var state = JSONObject()
                state.add("path", file.path)
                state.add("status", file.status.rawValue)
                return state
            })
            return entry
        })
        return object
    }
}
