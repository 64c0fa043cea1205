/// What started a run, as the run history records it.
public enum RunTrigger: String, Sendable, Codable, CaseIterable {
    /// A person: `ferry push`, `pull`, `sync`, `resolve --now`, or "run now" through the API.
    case manual
    /// The daemon or `ferry watch` by itself: settled files, a rescan, a poll, a retry.
    case watch
    /// A `schedule:` entry.
    case schedule

    /// The trigger of a daemon run, from the request's reason (`watch`, `poll`, `rescan`,
    /// `retry`, `schedule: …`, `api: …`); merged requests keep the strongest.
    public static func of(reason: String) -> RunTrigger {
        if reason.hasPrefix("api") || reason.contains(", api") { return .manual }
        if reason.hasPrefix("schedule") || reason.contains(", schedule") { return .schedule }
        return .watch
    }
}
