/// The rule that groups files into media items: files of one folder that share a stem
/// (`IMG_0001.jpg`, `.thumbnails/IMG_0001.jpg`, `IMG_0001.xmp`, `IMG_0001.gpx`) are one
/// item. Folders named in `thumbnailFolders` do not count as folders, so a thumbnail
/// belongs to the item of the picture it shows.
public struct ItemGrouping: Sendable, Equatable {
    public enum StemRule: String, Sendable, CaseIterable {
        /// The file name up to its first dot (`IMG_0001.jpg.xmp` → `IMG_0001`).
        case firstDot = "first-dot"
        /// The file name up to its last dot (`trip.2024.gpx` → `trip.2024`).
        case lastDot = "last-dot"
    }

    public var stem: StemRule
    /// Folder names skipped when placing a file (compared without regard to case).
    public var thumbnailFolders: [String]
    /// Name endings removed from a stem (`IMG_0001_thumb.jpg` → `IMG_0001`), case-insensitive.
    public var stemSuffixes: [String]

    public static let standard = ItemGrouping(
        stem: .firstDot, thumbnailFolders: [".thumbnails", "thumbnails", ".thumbs"],
        stemSuffixes: ["_thumb", "-thumb"])

    public init(stem: StemRule, thumbnailFolders: [String], stemSuffixes: [String]) {
        self.stem = stem
        self.thumbnailFolders = thumbnailFolders
        self.stemSuffixes = stemSuffixes
    }

    /// The item a path belongs to: its folder (thumbnail folders left out) and its stem,
    /// joined by `/`.
    public func itemKey(forPath path: String) -> String {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let name = components.removeLast()
        let folders = thumbnailFolders.map { $0.lowercased() }
        let kept = components.filter { !folders.contains($0.lowercased()) }
        return (kept + [stem(of: name)]).joined(separator: "/")
    }

    func stem(of name: String) -> String {
        // A leading dot belongs to the name (`.hidden.jpg` → `.hidden`).
        let body = name.hasPrefix(".") ? name.dropFirst() : Substring(name)
        let cut: String.Index?
        switch stem {
        case .firstDot: cut = body.firstIndex(of: ".")
        case .lastDot: cut = body.lastIndex(of: ".")
        }
        var result = String(name.hasPrefix(".") ? "." + body[..<(cut ?? body.endIndex)] : body[..<(cut ?? body.endIndex)])
        for suffix in stemSuffixes where result.count > suffix.count && result.lowercased().hasSuffix(suffix.lowercased()) {
            result.removeLast(suffix.count)
            break
        }
        return result
    }
}
