import FerryPluginAPI

/// A two-way device's claim to write a remote folder for a while, for stores that cannot
/// keep concurrent writers apart on their own: no conditional write of a new name, or a
/// move that is a copy and a delete (S3). docs/two-way-sync.md, "Write leases".
///
/// Each writer (a device's folder pair, as for change markers) has one file,
/// `.ferry-catalog/WRITER.lease`. A writer takes the lease by writing its file and then
/// listing the folder: it holds the lease when no other writer's live file is there, and
/// otherwise removes its own (empties it, in a folder without `delete`: an empty file is
/// no lease) and tries again a little later. Two writers can never both
/// hold it on a store whose listing shows every finished write (S3 since 2020, WebDAV, a
/// disk): the later of the two writes is listed by the other's look, or came after it, in
/// which case its own look sees the earlier file. Both may step back at once; the random
/// wait before the next try parts them.
///
/// A holder rewrites its file while it works (the content counts the renewals, so the
/// file's ETag, size or time changes each time). A file that stays the same for a whole
/// `duration` while another writer waits (by the waiter's clock: listed times may be other
/// devices' clocks) belongs to a device that crashed: it is removed. A holder
/// that could not renew for half the duration stops writing, before any waiter may take
/// its file for a crashed device's.
public enum WriteLease {
    public static let suffix = ".lease"

    public static func fileName(writer: String) -> String { writer + suffix }

    /// The writer a listed name in `.ferry-catalog/` is the lease of, if it is one.
    public static func writer(ofFileName name: String) -> String? {
        guard name.hasSuffix(suffix), name.count > suffix.count else { return nil }
        let writer = String(name.dropLast(suffix.count))
        return writer.contains("/") ? nil : writer
    }

    /// The file's content: the device's name (said to a device that waits) and the count
    /// of renewals.
    public static func encode(device: String, renewal: Int) -> [UInt8] {
        let name = device.filter { $0 != "\n" && $0 != "\r" }
        return Array("ferry-lease 1\ndevice \(name)\nrenewal \(renewal)\n".utf8)
    }

    /// The device named in a lease file; nil when it is not one.
    public static func device(in bytes: [UInt8]) -> String? {
        let lines = String(decoding: bytes.prefix(4096), as: UTF8.self).split(separator: "\n")
        guard lines.first == "ferry-lease 1" else { return nil }
        return lines.first { $0.hasPrefix("device ") }.map { String($0.dropFirst("device ".count)) }
    }

    /// One listed lease file, and what identifies its current content.
    public struct Listed: Equatable, Sendable {
        public var writer: String
        public var path: RelativePath
        /// Size, ETag and time together: any renewal changes at least one.
        public var stamp: String
        public var modifiedNanos: Int64?
    }

    /// The lease files among the entries of `.ferry-catalog/`.
    public static func listed(in entries: [RemoteEntry]) -> [Listed] {
        entries.compactMap { entry in
            // An empty file is a lease given back in a folder that may not delete (`vacate`).
            guard entry.kind == .file, entry.size > 0, let writer = writer(ofFileName: entry.path.name) else { return nil }
            let stamp = "\(entry.size)/\(entry.etag ?? "")/\(entry.modifiedNanos.map(String.init) ?? "")"
            return Listed(writer: writer, path: entry.path, stamp: stamp, modifiedNanos: entry.modifiedNanos)
        }
    }

    /// What a writer's look at the folder found.
    public struct Look: Equatable, Sendable {
        /// Other writers whose lease is live: this writer must not write now.
        public var live: [Listed]
        /// Other writers' leases left by crashed devices: to be removed.
        public var stale: [Listed]
        /// Whether this writer's own file is there (a holder that finds it gone has lost
        /// the lease: a waiter took it for a crashed device's).
        public var ownListed: Bool
    }

    /// Sorts the other writers' leases into live and stale. `firstSeen` says since when
    /// (this writer's monotonic clock, seconds) each lease has been seen unchanged
    /// (`seenKey`), `now` is that clock's time, and `duration` the lease's length.
    public static func look(at entries: [RemoteEntry], own writer: String, firstSeen: [String: Double], now: Double,
                            duration: Double) -> Look {
        let leases = listed(in: entries)
        var live: [Listed] = []
        var stale: [Listed] = []
        for lease in leases where lease.writer != writer {
            // Only this writer's own clock measures how long a file stayed the same: the
            // times in listings may be the other devices' clocks, which can be far off.
            let unchangedFor = firstSeen[seenKey(lease)].map { now - $0 } ?? 0
            if unchangedFor >= duration {
                stale.append(lease)
            } else {
                live.append(lease)
            }
        }
        return Look(live: live, stale: stale, ownListed: leases.contains { $0.writer == writer })
    }

    /// The key `look` reads `firstSeen` by.
    public static func seenKey(_ lease: Listed) -> String { lease.writer + " " + lease.stamp }
}
