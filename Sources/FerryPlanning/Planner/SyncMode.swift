/// How a folder pair moves files.
public enum SyncMode: String, Sendable, CaseIterable, Codable {
    /// Local → remote copy.
    case push
    /// Remote → local copy.
    case pull
    /// Two-way: changes on either side go to the other; both changed is a conflict.
    case sync
}
