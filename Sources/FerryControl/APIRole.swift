/// What a key may do with the control API, each role including the ones before it:
/// `read` sees (status, files, items, history, events, metrics, the page), `control` also
/// steers (run, rescan, pause, resume, retry, resolve), `admin` also reloads the config.
/// The Unix socket is admin: the file system already decides who connects.
public enum APIRole: String, Sendable, CaseIterable, Comparable, Codable {
    case read
    case control
    case admin

    public static func < (lhs: APIRole, rhs: APIRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The role a request needs (nil: none, the page's own files), by method and path:
    /// every action is a POST; any other method reads, or is answered 405.
    static func needed(method: String, segments: [String]) -> APIRole? {
        if RequestGuard.isPublic("/" + segments.joined(separator: "/")) { return nil }
        guard method == "POST" else { return .read }
        return segments == ["v1", "reload"] ? .admin : .control
    }
}
