import Foundation

/// Names that are different files on disk but one name to Ferry: `café.jpg` written with
/// é as one character (NFC) and as e plus a combining accent (NFD). Linux keeps both as
/// two files; Swift strings, and with them every map of paths in the planner, compare them
/// as equal, so one of the two was silently left out of a push or pull (and sent again on
/// every run). On one side of a pair, such files are failed with an error instead, and
/// left alone: nothing of them is sent, fetched or deleted until one is renamed.
///
/// Across the two sides the same name in different forms is one file (a server that
/// stores names in NFC, as Nextcloud and macOS do, keeps the file it was sent).
public enum NormalizationClash {
    /// Groups of two or more paths that differ byte for byte but are canonically
    /// equivalent, each group in the order first seen.
    public static func groups<Paths: Sequence<String>>(in paths: Paths) -> [[String]] {
        var byName: [String: [String]] = [:]
        var order: [String] = []
        for path in paths {
            if var group = byName[path] {
                // The key matched canonically; keep the path if its bytes are new.
                guard !group.contains(where: { $0.utf8.elementsEqual(path.utf8) }) else { continue }
                group.append(path)
                byName[path] = group
            } else {
                byName[path] = [path]
                order.append(path)
            }
        }
        return order.compactMap { byName[$0].flatMap { $0.count > 1 ? $0 : nil } }
    }

    /// The message for `path`, one of `group`, found on one side (`side`: "local" or
    /// "remote"). It says which form this one is: the names look the same when printed.
    public static func message(for path: String, in group: [String], side: String) -> String {
        "\(group.count) \(side) files have this name in different Unicode forms (the same letters, encoded "
            + "differently; this one is \(form(of: path))); Ferry cannot keep them apart and leaves them alone: rename all but one"
    }

    /// "NFC", "NFD", or "neither NFC nor NFD".
    static func form(of path: String) -> String {
        if path.precomposedStringWithCanonicalMapping.utf8.elementsEqual(path.utf8) { return "NFC" }
        if path.decomposedStringWithCanonicalMapping.utf8.elementsEqual(path.utf8) { return "NFD" }
        return "neither NFC nor NFD"
    }
}
