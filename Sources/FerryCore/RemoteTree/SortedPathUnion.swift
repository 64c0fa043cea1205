import FerryPluginAPI

/// The union of lists of paths that are each in path order (UTF-8 bytes) with no path
/// twice, in path order, each path once: one pass over the lists, where sorting their
/// union again would compare each path about log₂(n) times.
///
/// "Once" as Swift compares strings: a name spelled in NFC on one side and NFD on the
/// other is one file to the planner (`Planner.remoteSpelling`), though its two spellings
/// sort apart by bytes, with other names between them. The first spelling in path order
/// stands for both.
enum SortedPathUnion {
    static func of(_ lists: [[String]]) -> [String] {
        var positions = [Int](repeating: 0, count: lists.count)
        var union: [String] = []
        union.reserveCapacity(lists.map(\.count).max() ?? 0)
        // Paths with a byte outside ASCII, the only ones that can have another spelling.
        var spelledOtherwise: Set<String> = []
        while true {
            var least: String?
            for (list, position) in zip(lists, positions) where position < list.count {
                if let current = least, !list[position].precedesInUTF8Order(current) { continue }
                least = list[position]
            }
            guard let least else { return union }
            if least.utf8.contains(where: { $0 >= 0x80 }) {
                if spelledOtherwise.insert(least).inserted { union.append(least) }
            } else {
                union.append(least)
            }
            for index in lists.indices where positions[index] < lists[index].count && lists[index][positions[index]] == least {
                positions[index] += 1
            }
        }
    }
}
