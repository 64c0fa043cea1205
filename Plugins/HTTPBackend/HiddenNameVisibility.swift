import Synchronization

/// Whether the server's folder indexes leave out names that start with `.`: nginx's
/// autoindex always does, and so does Apache's as Debian and most distributions configure
/// it (`IndexIgnore .??*`); Python's `http.server` and most photo servers list them.
/// Learnt from the `Server` header of the first index page, so that a pull over plain
/// HTTP reads Ferry's catalog of such names (or says it cannot see them) instead of
/// missing them without a word.
final class HiddenNameVisibility: Sendable {
    private let hides = Mutex<Bool?>(nil)

    /// Nil until an index page has been read.
    var serverHidesDotNames: Bool? { hides.withLock { $0 } }

    func learn(serverHeader: String?) {
        let server = serverHeader?.lowercased() ?? ""
        let hidden = server.hasPrefix("nginx") || server.hasPrefix("apache")
        hides.withLock { $0 = hidden }
    }
}
