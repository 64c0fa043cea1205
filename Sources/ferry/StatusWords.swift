import FerryCore
import FerryPlanning
import Foundation

/// Statuses and times as `ferry status` shows them to a person; `--json` keeps the
/// machine names (`needsUpload`) and ISO 8601 in UTC.
enum StatusWords {
    static func file(_ status: FileStatus) -> String {
        switch status {
        case .localOnly: return "local only"
        case .needsUpload: return "waiting to upload"
        case .uploading: return "uploading"
        case .needsDownload: return "waiting to download"
        case .downloading: return "downloading"
        case .inSync: return "in sync"
        case .conflict: return "in conflict"
        case .syncError: return "failed"
        case .remoteOnly: return "remote only (evicted)"
        }
    }

    static func item(_ status: MediaItemStatus) -> String {
        switch status {
        case .inSync: return "in sync"
        case .filesPending: return "partly sent"
        case .queued: return "waiting"
        case .localOnly: return "local only"
        case .conflict: return "in conflict"
        case .syncError: return "failed"
        }
    }

    /// `2026-11-23 14:02:11 +0100`: ISO 8601's order, the local time zone, always shown.
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xx"
        return formatter.string(from: date)
    }
}
