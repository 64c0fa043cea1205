import ArchiveCodec
import FerryEngine
import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// Restores chosen members of a downloaded bundle into the local folder (blocking: run it
/// through `BlockingIO`).
///
/// Each member is written to `.NAME.ferry-part` beside its final name, checked against the
/// manifest (length and SHA-256), given its modification time and only then renamed into
/// place, so a damaged or truncated bundle never leaves a partial file under a final name.
/// Only members the manifest names are written, to the manifest's (checked) path; a member
/// that is a link, a folder or a device, or is missing, fails that file alone. Once the
/// archive itself turns out damaged, every member not yet restored fails with that cause.
/// Every file and folder is made through the local folder's `AnchoredFolder`: a link
/// planted in the folder fails that member, and nothing is written through it.
struct BundleExtractor {
    package struct Target: Sendable {
        package var path: String
        package var member: BundleCatalog.Member
        /// The local file the plan expects to replace (nil: none), so a file edited since
        /// the plan is not overwritten.
        package var expectedLocal: LocalVersion?
    }

    package var local: AnchoredFolder

    package func extract(_ archive: String, bundleName: String,
                 targets: [Target]) -> [String: Result<FileMetadata, BackendError>] {
        var wanted: [String: Target] = [:]
        for target in targets { wanted[target.member.entryName] = target }
        var results: [String: Result<FileMetadata, BackendError>] = [:]
        // Members extracted and verified, waiting for the flush before they are renamed.
        var verified: [(partial: String, created: FileMetadata, target: Target)] = []
        func fail(_ target: Target, _ message: String, retryable: Bool = false) {
            results[target.path] = .failure(BackendError(.io, message, path: target.path, retryable: retryable))
        }

        do {
            let reader = try ArchiveReader(path: archive)
            while !wanted.isEmpty, let entry = try reader.nextEntry() {
                guard let target = wanted.removeValue(forKey: entry.name) else { continue }
                guard entry.kind == .file else {
                    fail(target, "refusing bundle member '\(entry.name)' of \(bundleName): it is a \(entry.kind.rawValue), not a file")
                    continue
                }
                let partial = LocalFolder.temporary(beside: target.path)
                let created: FileMetadata
                let partialFile: OpenFile
                do throws(BackendError) {
                    (partialFile, created) = try BackendError.catching {
                        try local.makeDirectories(LocalFolder.parent(target.path))
                        try local.removeFile(partial)
                        let file = try local.open(partial, .createNew)
                        return (file, try file.metadata())
                    }
                } catch {
                    results[target.path] = .failure(error)
                    continue
                }
                let data: ArchiveMemberData
                do throws(ArchiveError) {
                    // Never more than the manifest's size: the byte after it ends the
                    // member (a small compressed bundle can hold a gigabyte of zeros).
                    // Into the file made above, never reopened by its path (which a folder
                    // swapped for a link would send elsewhere).
                    data = try reader.extract(into: partialFile, named: local.fullPath(partial), flush: false,
                                              limit: target.member.size)
                } catch {
                    try? local.removeFile(partial)
                    // The archive cannot be read past this point (or, for a member larger
                    // than its manifest, is not to be trusted further): this member and
                    // all the ones still wanted fail with the cause.
                    if error.code == .oversized {
                        fail(target, "bundle member '\(entry.name)' of \(bundleName) holds more than the \(target.member.size) bytes "
                             + "its manifest gives; stopped there, and the rest of the bundle is not read")
                    } else {
                        fail(target, "bundle \(bundleName) is damaged: \(error.description)", retryable: error.code == .io)
                    }
                    throw error
                }
                guard data.bytes == target.member.size, data.sha256 == target.member.sha256 else {
                    try? local.removeFile(partial)
                    fail(target, "bundle member '\(entry.name)' of \(bundleName) does not match its manifest (size or SHA-256)")
                    continue
                }
                verified.append((partial, created, target))
            }
        } catch {
            for target in wanted.values {
                fail(target, "bundle \(bundleName) is damaged or cut short: \(error)")
            }
            wanted = [:]
        }
        for target in wanted.values {
            fail(target, "bundle \(bundleName) has no member '\(target.member.entryName)'")
        }
        // One flush for the whole bundle instead of an fsync per member (5,000 fsyncs were
        // most of a 5,000-file restore's time); the data is on disk before any member gets
        // its final name, as with a single download.
        if !verified.isEmpty { try? local.syncFilesystem() }
        for item in verified {
            results[item.target.path] = place(item.partial, created: item.created, target: item.target)
        }
        return results
    }

    /// Gives the restored file its time and renames it into place, unless the local file
    /// changed since the plan, a folder is in the way, or the partial file is no longer the
    /// one made for it.
    private func place(_ partial: String, created: FileMetadata, target: Target) -> Result<FileMetadata, BackendError> {
        let final = target.path
        do throws(BackendError) {
            return .success(try BackendError.catching { () throws -> FileMetadata in
                guard let written = try local.metadata(partial), written.inode == created.inode,
                      written.device == created.device else {
                    throw BackendError(.io, "the partial file was replaced while the bundle was being restored",
                                       path: local.fullPath(partial))
                }
                try local.setModificationTime(partial, nanos: target.member.modifiedNanos)
                let current = try local.metadata(final)
                if current?.kind == .directory {
                    throw BackendError(.alreadyExists, "a local folder is in the way of the file", path: local.fullPath(final))
                }
                let unchanged: Bool
                switch (current, target.expectedLocal) {
                case (nil, nil): unchanged = true
                case let (current?, expected?): unchanged = current.size == expected.size && current.modifiedNanos == expected.modifiedNanos
                default: unchanged = false
                }
                guard unchanged else {
                    throw BackendError(.changedDuringTransfer, "the local file changed while its bundle was being restored; run pull again",
                                       path: local.fullPath(final), retryable: false)
                }
                try local.rename(partial, to: final)
                guard let placed = try local.metadata(final) else {
                    throw BackendError(.io, "the file vanished right after it was put in place", path: local.fullPath(final), retryable: true)
                }
                return placed
            })
        } catch {
            try? local.removeFile(partial)
            return .failure(error)
        }
    }
}
