import FerryConfig
import FerryCore
import FerryJournal
import FerrySystem
import Foundation

/// How many media items are `filesPending` across the journal's pairs, for the daemon's
/// live status. Derived from the files' statuses (`MediaItem`), which means reading every
/// row: done only while some file is pending, since the status board asks every second,
/// and at most every `interval` seconds or twenty times as long as the last count took,
/// so that counting a large journal takes no more than a twentieth of the time.
///
/// The rows are read a page at a time and each item is kept as a hash of its key and what
/// its files were (`MediaItemStatus.Seen`), about 20 bytes: counting 1,000,000 files
/// held every row at once and took the daemon from 60 to 730 MiB. Two items whose keys
/// share a 64-bit hash would count as one; the figure is a live estimate, not a record.
actor PendingItemCount {
    static let pageSize = 5_000

    private let state: StateFolder
    private let grouping: ItemGrouping
    private let interval: Double
    private var last: (value: Int?, at: Double, nextAt: Double)?
    private let clock: any FerryClock

    init(state: StateFolder, grouping: ItemGrouping, interval: Double = 15, clock: any FerryClock) {
        self.clock = clock
        self.state = state
        self.grouping = grouping
        self.interval = interval
    }

    func current() async -> Int? {
        let now = clock.now()
        if let last, now < last.nextAt { return last.value }
        let value = await count()
        let took = clock.now() - now
        last = (value, now, now + max(interval, 20 * took))
        return value
    }

    private func count() async -> Int? {
        guard let journal = try? await state.existingJournal() else { return nil }
        do {
            guard try await journal.hasPendingFiles() else { return 0 }
            var total = 0
            for pair in try await journal.folderPairs() {
                guard let id = pair.id else { continue }
                var items: [Int: MediaItemStatus.Seen] = [:]
                var after: String?
                while true {
                    let page = try await journal.records(pairId: id, after: after, limit: Self.pageSize)
                    for record in page {
                        items[grouping.itemKey(forPath: record.path).hashValue, default: []].add(record.status)
                    }
                    guard page.count == Self.pageSize, let lastPath = page.last?.path else { break }
                    after = lastPath
                }
                total += items.values.count { MediaItemStatus($0) == .filesPending }
            }
            return total
        } catch {
            return nil
        }
    }
}
