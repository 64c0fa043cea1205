import Foundation

/// Who can change a file: what decides whether Ferry may take orders from it. A config
/// file can start any program (an `exec:` remote), and a plugin executable is one; if
/// another user can change either, that user can run code as you.
public struct FileOwnership: Sendable, Equatable {
    public var owner: UInt32
    public var group: UInt32
    /// The permission bits (`0o7777`).
    public var permissions: UInt32
    /// The group is the current user's own (user private groups: a group of one, as
    /// Debian and Fedora make per user), so its write bit gives no one else access.
    public var groupIsPrivate: Bool

    public init(owner: UInt32, group: UInt32, permissions: UInt32, groupIsPrivate: Bool) {
        self.owner = owner
        self.group = group
        self.permissions = permissions
        self.groupIsPrivate = groupIsPrivate
    }
}

/// The rule, as OpenSSH applies it to `authorized_keys` (with Debian's allowance for user
/// private groups): a file that decides what Ferry runs, and the folder that holds it,
/// must belong to the current user or to root, and nobody else may write to them (a
/// folder writable by others is fine with the sticky bit, like /tmp).
public enum FileTrust {
    /// The environment variable that skips the check, for a setup where it is wrong.
    public static let overrideVariable = "FERRY_TRUST_CONFIG"

    /// Why `file` (in `folder`) must not be trusted by `user`, or nil when it may.
    public static func distrust(file: FileOwnership, folder: FileOwnership?, user: UInt32) -> String? {
        if let reason = reason(file, user: user, what: "it") { return reason }
        if let folder, let reason = reason(folder, user: user, what: "its folder", sticky: true) { return reason }
        return nil
    }

    private static func reason(_ item: FileOwnership, user: UInt32, what: String, sticky: Bool = false) -> String? {
        let mode = String(item.permissions & 0o7777, radix: 8)
        if item.owner != user && item.owner != 0 {
            return "\(what) belongs to another user (uid \(item.owner))"
        }
        if sticky && item.permissions & 0o1000 != 0 { return nil }
        if item.permissions & 0o002 != 0 {
            return "\(what) is writable by every user (mode \(mode))"
        }
        if item.permissions & 0o020 != 0 && !item.groupIsPrivate {
            return "\(what) is writable by its group (mode \(mode))"
        }
        return nil
    }

    /// Why the file at `path` must not be trusted by the current user, or nil. A path
    /// that cannot be read is not refused here: reading it fails with its own error.
    public static func distrust(path: String, environment: [String: String]) -> String? {
        if environment[overrideVariable] == "1" { return nil }
        let user = UInt32(geteuid())
        guard let file = ownership(path) else { return nil }
        return distrust(file: file, folder: ownership(LocalFileSystem.parentPath(LocalFileSystem.absolute(path))), user: user)
    }

    /// `stat` (following links, as the file is opened through them).
    static func ownership(_ path: String) -> FileOwnership? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileOwnership(owner: UInt32(info.st_uid), group: UInt32(info.st_gid), permissions: UInt32(info.st_mode & 0o7777),
                             groupIsPrivate: isPrivateGroup(UInt32(info.st_gid)))
    }

    /// The current user's primary group, named like the user (Debian's and Fedora's
    /// user private groups): nobody else is meant to be in it.
    private static func isPrivateGroup(_ group: UInt32) -> Bool {
        // /proc/self belongs to this process's user and primary group.
        guard group == UInt32(getegid()),
              let groupName = try? FileManager.default.attributesOfItem(atPath: "/proc/self")[.groupOwnerAccountName] as? String
        else { return false }
        return groupName == NSUserName()
    }
}
