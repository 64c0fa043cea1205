import FerryCore
import FerryPlanning
import Foundation

/// Every version of a file the simulated devices wrote, and what the devices' own hands did
/// to it afterwards, for checking the trees a simulation ends with. A version is its content:
/// each write puts down content no other write has, so a tree says exactly which versions
/// it holds and where.
///
/// The rule this checks: **a version may disappear only when a device that held it (as the
/// file under its name, in that device's folder) replaced it by an edit or deleted it.**
/// Such a version is *superseded*: the person at that device saw it and moved on, and the
/// sync carries that over (the old version goes to a trash). Every other version must be in
/// the tree every device ends with, under one of its names (where it was written, or a name
/// a device renamed it to) or a conflict copy of one; under `newer`, `local` or `remote` a
/// version that lost a conflict may instead be in a trash (a device's or the remote's).
/// Among those that must survive: a version written and never synced before a crash, one
/// that was the device's file while another device's change of the same file arrived, one
/// whose upload raced another device's. What Ferry does to a file (a download over it, a
/// rename to a conflict copy) never supersedes anything: only edits and deletions made
/// between syncs do.
///
/// Two more rules: nothing comes back under a name a device deleted it from or renamed it
/// away from (a deletion may only be undone by a *new* version, written by a device that had
/// not seen the deletion), and every file holds a version some device wrote (never a mix or
/// a part of one).
struct VersionLedger: Sendable {
    struct Version: Sendable {
        let content: String
        /// The device that wrote it, and where.
        let writer: String
        /// Where it was written, and every name a device renamed it to.
        var names: Set<String>
        /// Why it may disappear: which device replaced or deleted it while holding it.
        var supersededBy: String?
        /// Names it was deleted from or renamed away from, and the device that held it there.
        var goneFrom: [(path: String, device: String)] = []
    }

    /// A version back under a name a device deleted it from or renamed it away from.
    struct Comeback: Sendable {
        var path: String
        var version: Version
        /// The devices that deleted or renamed it there.
        var devices: [String]

        var description: String {
            "\(path) came back with \(VersionLedger.describe(version)) after \(devices.joined(separator: " and ")) "
                + "deleted or renamed it there"
        }
    }

    private(set) var versions: [String: Version] = [:]
    /// Contents found under a name by an edit that were nobody's version.
    private(set) var strays: [String] = []

    func knows(_ content: String) -> Bool { versions[content] != nil }

    /// `device` wrote `content` at `path`, over `replaced` (what its file held, nil for a new file).
    mutating func wrote(_ content: String, at path: String, by device: String, replacing replaced: String?) {
        versions[content] = Version(content: content, writer: device, names: [path])
        if let replaced { supersede(replaced, at: path, by: "\(device) edited \(path)") }
    }

    /// `device` deleted its file `path`, which held `content`.
    mutating func deleted(_ path: String, holding content: String, by device: String) {
        supersede(content, at: path, by: "\(device) deleted \(path)")
        versions[content]?.goneFrom.append((path, device))
    }

    /// `device` renamed its file `source`, which held `content`, to `target`.
    mutating func renamed(_ source: String, to target: String, holding content: String, by device: String) {
        guard versions[content] != nil else {
            strays.append("\(device) renamed \(source), which held \(content.debugDescription): nobody wrote that")
            return
        }
        versions[content]?.names.insert(target)
        versions[content]?.goneFrom.append((source, device))
    }

    private mutating func supersede(_ content: String, at path: String, by reason: String) {
        guard versions[content] != nil else {
            strays.append("\(reason), which held \(content.debugDescription): nobody wrote that")
            return
        }
        if versions[content]?.supersededBy == nil { versions[content]?.supersededBy = reason }
    }

    /// One line per way `tree` (path → content) breaks the rules above, but for versions
    /// lost (`lost`) and deletions undone (`comebacks`).
    func problems(in tree: [String: String]) -> [String] {
        var problems = strays
        for (path, content) in tree.sorted(by: { $0.key < $1.key }) {
            guard let version = versions[content] else {
                problems.append("\(path) holds \(content.debugDescription), which no device wrote")
                continue
            }
            let bases = Set(version.names.map(ConflictCopyName.base(of:)))
            if !bases.contains(ConflictCopyName.base(of: path)) {
                problems.append("\(path) holds \(Self.describe(version)), not under its name or a conflict copy of it")
            }
            // Both ways kept where there was one version: a device took its own unrecorded
            // write for another device's.
            if ConflictCopyName.isCopy(path), tree[ConflictCopyName.base(of: path)] == content {
                problems.append("\(path) is a conflict copy with the same bytes as \(ConflictCopyName.base(of: path))")
            }
        }
        return problems
    }

    /// The versions that must survive and are not in `tree`; under `newer`, `local` and
    /// `remote` one in `trash` (every content found in a trash, local or remote) survives.
    func lost(in tree: [String: String], trash: Set<String>, policy: ConflictPolicy) -> [Version] {
        let found = Set(tree.values)
        return versions.values.sorted(by: { $0.content < $1.content }).filter { version in
            version.supersededBy == nil && !found.contains(version.content) && !(policy != .keepBoth && trash.contains(version.content))
        }
    }

    /// Versions in `tree` under a name they were deleted or renamed away from.
    func comebacks(in tree: [String: String]) -> [Comeback] {
        tree.sorted(by: { $0.key < $1.key }).compactMap { path, content in
            guard let version = versions[content] else { return nil }
            let devices = version.goneFrom.filter { $0.path == path }.map(\.device)
            return devices.isEmpty ? nil : Comeback(path: path, version: version, devices: devices)
        }
    }

    static func describe(_ version: Version) -> String {
        "\(version.content.debugDescription) (written by \(version.writer) at \(version.names.sorted().joined(separator: ", ")))"
    }
}

/// Conflict copies' names: `NAME.conflict-YYYYMMDD-HHMMSS-HOST.EXT` beside `NAME.EXT`.
enum ConflictCopyName {
    private static let marker = #"\.conflict-\d{8}-\d{6}-[A-Za-z0-9_-]+"#

    /// The name with every conflict marker taken out: the file a conflict copy (or a copy
    /// of a copy) was made from.
    static func base(of path: String) -> String {
        path.replacingOccurrences(of: marker, with: "", options: .regularExpression)
    }

    static func isCopy(_ path: String) -> Bool { base(of: path) != path }
}
