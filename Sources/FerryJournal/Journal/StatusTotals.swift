import FerryPlanning

/// A pair's files and bytes per status over all its queues: what `GET /folders` and the
/// metrics report of the journal, and the failed and conflicted counts they single out.
public struct StatusTotals: Sendable, Equatable {
    public struct Total: Sendable, Equatable {
        public var files: Int
        public var bytes: Int64

        public init(files: Int, bytes: Int64) {
            self.files = files
            self.bytes = bytes
        }
    }

    /// Only statuses that have files.
    public let byStatus: [FileStatus: Total]

    public init(_ counts: [StatusCount]) {
        var totals: [FileStatus: Total] = [:]
        for count in counts {
            totals[count.status, default: Total(files: 0, bytes: 0)].files += count.files
            totals[count.status, default: Total(files: 0, bytes: 0)].bytes += count.bytes
        }
        byStatus = totals
    }

    public subscript(status: FileStatus) -> Total {
        byStatus[status] ?? Total(files: 0, bytes: 0)
    }

    public var failedFiles: Int { self[.syncError].files }
    public var conflictedFiles: Int { self[.conflict].files }
}

extension Journal {
    public func statusTotals(pairId: Int64) async throws(JournalError) -> StatusTotals {
        StatusTotals(try await statusCounts(pairId: pairId))
    }
}
