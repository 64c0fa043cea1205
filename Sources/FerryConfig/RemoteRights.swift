/// What Ferry may do to a folder's remote (`remote_rights: [read, write, delete]`).
///
/// The rights bound Ferry, not the server: a folder without `delete` never sends a deletion
/// and never destroys a remote version, whatever the command asks; one without `write`
/// only ever pulls. Where the server refuses an operation anyway, that is an error as usual.
public struct RemoteRights: Sendable, Equatable {
    public enum Right: String, Sendable, CaseIterable {
        case read, write, delete
    }

    public var rights: Set<Right>

    public static let all = RemoteRights(rights: Set(Right.allCases))

    public init(rights: Set<Right>) {
        self.rights = rights
    }

    public var mayRead: Bool { rights.contains(.read) }
    public var mayWrite: Bool { rights.contains(.write) }
    public var mayDelete: Bool { rights.contains(.delete) }

    /// The folder keeps every version it replaces (append-only): it may write but not delete.
    public var keepsEveryVersion: Bool { mayWrite && !mayDelete }
}

/// How long replaced versions are kept where the folder may delete (`keep_versions`,
/// `keep_days`); without either, a folder with `delete` keeps no versions at all and one
/// without keeps every version for good.
public struct VersionRetention: Sendable, Equatable {
    /// The newest this many saved versions of a file are kept; nil: no limit by count.
    public var keepVersions: Int?
    /// Saved versions replaced more than this many days ago are removed; nil: no limit by age.
    public var keepDays: Int?

    public init(keepVersions: Int? = nil, keepDays: Int? = nil) {
        self.keepVersions = keepVersions
        self.keepDays = keepDays
    }

    public var isEmpty: Bool { keepVersions == nil && keepDays == nil }
}
