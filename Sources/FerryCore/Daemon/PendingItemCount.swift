import FerryJournal
import FerrySystem
import Foundation

/// How many media items are `filesPending` across the journal's pairs, for the daemon's
/// live status. Derived from the files' statuses (`MediaItem`), which means reading every
/// row: done at most every `interval` seconds and only while some file is pending,
/// since the status board asks every second.
actor PendingItemCount {
    private let state: StateFolder
    private let grouping: ItemGrouping
    private let interval: Double
    private var last: (value: Int?, at: Double)?
    private let clock: any FerryClock

    init(state: StateFolder, grouping: ItemGrouping, interval: Double = 15, clock: any FerryClock) {
        self.clock = clock
        self.state = state
        self.grouping = grouping
        self.interval = interval
    }

    func current() async -> Int? {
        let now = clock.now()
        if let last, now - last.at < interval { return last.value }
        let value = await count()
        last = (value, now)
        return value
    }

    private func count() async -> Int? {
        guard let journal = try? await state.existingJournal() else { return nil }
        do {
            let counts = try await journal.statusCounts(pairId: nil)
            guard counts.contains(where: { $0.status.isPending && $0.files > 0 }) else { return 0 }
            var total = 0
            for pair in try await journal.folderPairs() {
                guard let id = pair.id else { continue }
                let files = try await journal.records(pairId: id).map { record in
                    MediaItem.FileState(path: record.path, status: record.status,
                                        bytes: record.localSize ?? record.remoteSize ?? 0)
                }
                total += MediaItem.group(files, by: grouping).count { $0.status == .filesPending }
            }
            return total
        } catch {
            return nil
        }
    }
}
