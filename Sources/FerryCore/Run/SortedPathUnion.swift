import FerryPluginAPI

/// The union of lists of paths that are each in path order (UTF-8 bytes) with no path
/// twice, in path order, each path once: one pass over the lists, where sorting their
/// union again would compare each path about log₂(n) times.
enum SortedPathUnion {
    static func of(_ lists: [[String]]) -> [String] {
        var positions = [Int](repeating: 0, count: lists.count)
        var union: [String] = []
        union.reserveCapacity(lists.map(\.count).max() ?? 0)
        while true {
            var least: String?
            for (list, position) in zip(lists, positions) where position < list.count {
                if let current = least, !list[position].precedesInUTF8Order(current) { continue }
                least = list[position]
            }
            guard let least else { return union }
            union.append(least)
            for index in lists.indices where positions[index] < lists[index].count && lists[index][positions[index]] == least {
                positions[index] += 1
            }
        }
    }
}
