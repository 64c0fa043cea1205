import FerryPlanning
import FerryPluginAPI

/// A regular file found by the scanner.
public struct LocalEntry: Sendable, Equatable {
    public var path: RelativePath
    public var version: LocalVersion

    public init(path: RelativePath, version: LocalVersion) {
        self.path = path
        self.version = version
    }
}

/// Something the scanner passed over, with why.
public struct ScanNote: Sendable, Equatable {
    public enum Reason: String, Sendable {
        case symbolicLink = "symbolic link (set scan.follow_symlinks to follow links inside the folder)"
        case linkOutsideFolder = "symbolic link pointing outside the folder"
        case unsupportedName = "name with a control character or invalid UTF-8"
        case specialFile = "not a regular file"
        case unreadable = "cannot be read"
    }

    public var path: String
    public var reason: Reason
    public var detail: String?
}

/// What one walk of a local folder found.
public struct ScanResult: Sendable {
    public var entries: [LocalEntry]
    public var notes: [ScanNote]
}
