import Foundation

/// What a two-way sync's plan needs beyond push and pull: how conflicts are settled, and
/// the names the run gives to conflict copies and trash folders.
public struct SyncPlanSettings: Sendable, Equatable {
    public var conflicts: ConflictPolicies
    /// This machine's name as it appears in conflict copies (already sanitised).
    public var host: String
    /// The run's start time as `YYYYMMDD-HHMMSS` (UTC): in conflict names, and the name of
    /// the run's trash folder.
    public var stamp: String
    /// Whether deleted and overwritten files go to the trash (else they are destroyed).
    public var usesTrash: Bool

    public init(conflicts: ConflictPolicies = .init(), host: String, stamp: String, usesTrash: Bool = true) {
        self.conflicts = conflicts
        self.host = host
        self.stamp = stamp
        self.usesTrash = usesTrash
    }

    /// A host name fit for a file name: letters, digits, `.`, `_` and `-` kept, anything
    /// else (a `/`, spaces) turned into `-`; the domain part dropped.
    public static func sanitisedHost(_ name: String) -> String {
        let short = name.split(separator: ".").first.map(String.init) ?? name
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        let cleaned = String(short.map { allowed.contains($0) ? $0 : "-" })
        let trimmed = cleaned.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return trimmed.isEmpty ? "host" : String(trimmed.prefix(40))
    }

    /// `NAME.conflict-STAMP-HOST.EXT` beside `path` (the extension is what follows the
    /// name's last dot; a leading dot does not count).
    public func conflictPath(for path: String) -> String {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let name = components.removeLast()
        let body = name.hasPrefix(".") ? String(name.dropFirst()) : name
        let lead = name.hasPrefix(".") ? "." : ""
        let marker = "conflict-\(stamp)-\(host)"
        let renamed: String
        if let dot = body.lastIndex(of: "."), dot != body.startIndex {
            renamed = lead + body[..<dot] + "." + marker + body[dot...]
        } else {
            renamed = lead + body + "." + marker
        }
        return (components + [renamed]).joined(separator: "/")
    }

    /// Where a file of this run goes in a trash folder: `STAMP/path`.
    public func trashPath(for path: String) -> String {
        stamp + "/" + path
    }
}
