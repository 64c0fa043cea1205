import FerryPluginAPI
import FerrySystem
import Foundation

/// Names and empties a two-way sync's trash folders. Each run files its trash under a
/// folder named for its start time (`YYYYMMDD-HHMMSS`, UTC); a folder older than the
/// retention is removed as a whole, on each side, at the end of a sync.
public enum TrashExpiry {
    /// A run's stamp: its start time as `YYYYMMDD-HHMMSS` in UTC.
    public static func stamp(at time: Double) -> String {
        let components = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                                    from: Date(timeIntervalSince1970: time))
        return String(format: "%04d%02d%02d-%02d%02d%02d", components.year ?? 0, components.month ?? 0, components.day ?? 0,
                      components.hour ?? 0, components.minute ?? 0, components.second ?? 0)
    }

    /// The time a stamp names; nil for a name that is not a stamp (left alone).
    public static func time(ofStamp name: String) -> Double? {
        let digits = name.replacingOccurrences(of: "-", with: "")
        guard name.count == 15, name.dropFirst(8).first == "-", digits.count == 14, digits.allSatisfy(\.isASCII),
              digits.allSatisfy(\.isNumber) else { return nil }
        func number(_ offset: Int, _ length: Int) -> Int {
            Int(digits.dropFirst(offset).prefix(length)) ?? 0
        }
        var components = DateComponents()
        components.year = number(0, 4)
        components.month = number(4, 2)
        components.day = number(6, 2)
        components.hour = number(8, 2)
        components.minute = number(10, 2)
        components.second = number(12, 2)
        return utcCalendar.date(from: components)?.timeIntervalSince1970
    }

    /// Of a trash folder's entries, the run folders older than `keepSeconds` at `now`.
    public static func expired(_ names: [String], now: Double, keepSeconds: Double?) -> [String] {
        guard let keepSeconds else { return [] }
        return names.filter { name in time(ofStamp: name).map { now - $0 > keepSeconds } ?? false }.sorted()
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar
    }()

    /// Removes the expired run folders of the local trash folder. The walk goes through an
    /// `AnchoredFolder`: a link planted in the trash is removed as a link, never followed
    /// into what it points to.
    static func purgeLocal(_ folder: String, now: Double, keepSeconds: Double?) throws(BackendError) {
        try BackendError.catching {
            guard try LocalFileSystem.metadata(folder)?.kind == .directory else { return }
            let trash = try AnchoredFolder(folder)
            for name in expired(try trash.entries("").map(\.name), now: now, keepSeconds: keepSeconds) {
                try removeTree(name, in: trash)
            }
        }
    }

    private static func removeTree(_ relative: String, in trash: AnchoredFolder) throws {
        guard let meta = try trash.metadata(relative) else { return }
        guard meta.kind == .directory else { return try trash.removeFile(relative) }
        for (name, _) in try trash.entries(relative) { try removeTree(relative + "/" + name, in: trash) }
        try trash.removeDirectory(relative)
    }

    /// Removes the expired run folders of the remote trash folder: their files, then their
    /// folders, deepest first.
    static func purgeRemote(_ folder: RelativePath, backend: any Backend, now: Double, keepSeconds: Double?) async throws(BackendError) {
        guard keepSeconds != nil else { return }
        let runs: [RemoteEntry]
        do {
            runs = try await backend.list(folder)
        } catch {
            if error.code == .notFound { return }
            throw error
        }
        let names = runs.filter { $0.kind == .directory }.map(\.path.name)
        for name in expired(names, now: now, keepSeconds: keepSeconds) {
            let run = try folder.appending(name)
            var folders: Set<RelativePath> = [run]
            for file in try await backend.listTree(run) {
                try await backend.delete(file.path)
                var parent = file.path.parent
                while let current = parent, current != run {
                    folders.insert(current)
                    parent = current.parent
                }
            }
            for emptied in folders.sorted(by: { $0.components.count > $1.components.count }) {
                try await backend.delete(emptied)
            }
        }
    }
}
