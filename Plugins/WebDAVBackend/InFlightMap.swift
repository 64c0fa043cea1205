/// `body` over `items` with at most `limit` calls running at once, the outputs in the
/// items' order: requests that need no answer from each other, kept from opening a
/// connection each.
func mapInFlight<Item: Sendable, Output: Sendable>(
    _ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async -> Output
) async -> [Output] {
    await withTaskGroup(of: (Int, Output).self) { group in
        var outputs = [Output?](repeating: nil, count: items.count)
        var next = 0
        while next < min(max(1, limit), items.count) {
            let index = next
            group.addTask { (index, await body(items[index])) }
            next += 1
        }
        for await (index, output) in group {
            outputs[index] = output
            if next < items.count {
                let index = next
                group.addTask { (index, await body(items[index])) }
                next += 1
            }
        }
        return outputs.compactMap { $0 }
    }
}
