/// Where a part of a paged plan ends. The journal's rows, the local scan and the remote
/// listing each come in path order, a batch at a time; a part ends at the first of the last
/// paths read of the sides not yet read to their end, so a part is small whichever side is
/// large (a first push has an empty journal and a huge scan), and everything a part needs
/// of each side is in hand. The last part (no such side left) takes everything.
package struct PartCut: Sendable, Equatable {
    /// The part's last path; nil: this is the last part.
    package let upper: String?

    /// `lastPaths`: each side's last path read, nil for a side read to its end (or empty).
    package init(lastPaths: [String?]) {
        var upper: String?
        for case let candidate? in lastPaths where upper.map({ candidate.precedesInUTF8Order($0) }) ?? true {
            upper = candidate
        }
        self.upper = upper
    }

    package var isLast: Bool { upper == nil }

    package func contains(_ path: String) -> Bool {
        upper.map { !$0.precedesInUTF8Order(path) } ?? true
    }

    /// Takes the part's leading items off `items` (in path order) and returns them; the
    /// whole array is handed over, not copied, when all of it is in the part.
    package func take<Item>(from items: inout [Item], path: (Item) -> String) -> [Item] {
        guard let end = items.firstIndex(where: { !contains(path($0)) }) else {
            defer { items = [] }
            return items
        }
        let part = Array(items[..<end])
        items.removeSubrange(..<end)
        return part
    }
}
