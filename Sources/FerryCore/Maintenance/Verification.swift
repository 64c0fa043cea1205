import FerryPlanning
import FerryPluginAPI

/// Compares the journal's rows of a pair with the two sides as they are, by metadata: what
/// `ferry verify` reports (and `--repair` fixes). Pure logic over values.
public enum Verification {
    public static func findings(records: [FileRecord], local: [String: LocalVersion],
                                remote: [String: RemoteVersion]) -> [VerificationFinding] {
        var findings: [VerificationFinding] = []
        var known: Set<String> = []
        for record in records {
            known.insert(record.path)
            let localNow = local[record.path]
            let remoteNow = remote[record.path]
            if localNow == nil && remoteNow == nil {
                findings.append(VerificationFinding(path: record.path, kind: .staleRow, detail: "on neither side"))
                continue
            }
            // What the journal last saw on each side: the view of the last scan and listing.
            switch (record.local, localNow) {
            case let (recorded?, now?) where !(recorded.size == now.size && recorded.modifiedNanos == now.modifiedNanos):
                findings.append(VerificationFinding(path: record.path, kind: .localDiffers,
                                                    detail: "journal \(recorded.size) bytes, disk \(now.size) bytes"
                                                        + (recorded.size == now.size ? " (modification time differs)" : "")))
            case (_?, nil):
                findings.append(VerificationFinding(path: record.path, kind: .localMissing, detail: "gone from the local folder"))
            case (nil, _?):
                findings.append(VerificationFinding(path: record.path, kind: .localOrphan, detail: "not recorded as local"))
            default: break
            }
            switch (record.remote, remoteNow) {
            case let (recorded?, now?) where !recorded.isSameVersion(as: now):
                findings.append(VerificationFinding(path: record.path, kind: .remoteDiffers,
                                                    detail: "journal \(describe(recorded)), remote \(describe(now))"))
            case (_?, nil):
                findings.append(VerificationFinding(path: record.path, kind: .remoteMissing, detail: "gone from the remote"))
            case (nil, _?):
                findings.append(VerificationFinding(path: record.path, kind: .remoteOrphan, detail: "not recorded as remote"))
            default: break
            }
        }
        for path in local.keys where !known.contains(path) {
            findings.append(VerificationFinding(path: path, kind: .localOrphan, detail: "not in the journal"))
        }
        for path in remote.keys where !known.contains(path) {
            findings.append(VerificationFinding(path: path, kind: .remoteOrphan, detail: "not in the journal"))
        }
        return findings.sorted { lhs, rhs in
            lhs.path != rhs.path ? lhs.path.precedesInUTF8Order(rhs.path) : lhs.kind.rawValue < rhs.kind.rawValue
        }
    }

    /// The journal rows after `--repair`: rows on neither side dropped; each row's view of
    /// each side brought up to date (the last-synced versions are left alone, so the next
    /// sync decides from what really changed); a row whose bytes differ on the two sides
    /// although the journal had them in sync loses its last sync and is marked as a
    /// conflict answered "keep both": metadata cannot tell which copy is right, so the next
    /// sync keeps both and nothing is lost.
    public static func repaired(records: [FileRecord], findings: [VerificationFinding],
                                local: [String: LocalVersion], remote: [String: RemoteVersion],
                                now: Double) -> (upserts: [FileRecord], removed: [String]) {
        var byPath: [String: [VerificationFinding.Kind]] = [:]
        for finding in findings { byPath[finding.path, default: []].append(finding.kind) }
        var upserts: [FileRecord] = []
        var removed: [String] = []
        for record in records {
            guard let kinds = byPath[record.path] else { continue }
            if kinds.contains(.staleRow) {
                removed.append(record.path)
                continue
            }
            var updated = record
            updated.local = local[record.path]
            updated.remote = remote[record.path]
            if kinds.contains(.contentDiffers) {
                updated.markContentConflict(reason: "the bytes differ on the two sides (ferry verify --hash); the next sync keeps both")
            }
            if updated != record {
                updated.updatedAt = now
                upserts.append(updated)
            }
        }
        return (upserts, removed)
    }

    private static func describe(_ version: RemoteVersion) -> String {
        "\(version.size) bytes" + (version.etag.map { ", ETag \($0)" } ?? "")
    }
}
