import ArchiveCodec
import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// Packs local files into one bundle file (blocking: run it through `BlockingIO`).
///
/// The archive is written to `.NAME.ferry-part` and renamed when complete. A file is
/// checked before and after it is packed: one that vanished or changed is left out of the
/// bundle's manifest (its bytes may be in the archive, but nothing points at them) and goes
/// with a later run.
struct BundleBuilder {
    struct Packed: Sendable {
        package var record: FileRecord
        package var version: LocalVersion
        package var data: ArchiveMemberData
    }

    struct Left: Sendable {
        package var record: FileRecord
        package var vanished: Bool
    }

    package struct Result: Sendable {
        package var packed: [Packed]
        package var left: [Left]
        /// The finished bundle file and its metadata.
        package var file: String
        package var size: Int64
        package var modifiedNanos: Int64
    }

    package var localRoot: String
    package var format: ArchiveFormat

    package func build(_ records: [FileRecord], into file: String) throws(BundleError) -> Result {
        let partial = LocalFileSystem.join(LocalFileSystem.parentPath(file), TemporaryName.for(file.split(separator: "/").last.map(String.init) ?? file))
        var packed: [Packed] = []
        var left: [Left] = []
        do {
            try LocalFileSystem.makeDirectories(LocalFileSystem.parentPath(file), permissions: 0o700)
            let writer = try ArchiveWriter(path: partial, format: format)
            for record in records {
                let source = LocalFileSystem.join(localRoot, record.path)
                guard let before = try LocalFileSystem.metadata(source), before.kind == .file else {
                    left.append(Left(record: record, vanished: true))
                    continue
                }
                guard let planned = record.local, before.size == planned.size, before.modifiedNanos == planned.modifiedNanos else {
                    left.append(Left(record: record, vanished: false))
                    continue
                }
                let data = try writer.append(file: source, as: record.path, size: before.size, modifiedNanos: before.modifiedNanos)
                let after = try LocalFileSystem.metadata(source)
                guard let after, after.sameVersion(as: before) else {
                    left.append(Left(record: record, vanished: after == nil))
                    continue
                }
                packed.append(Packed(record: record, version: LocalVersion(size: before.size, modifiedNanos: before.modifiedNanos,
                                                                           inode: Int64(bitPattern: before.inode)),
                                     data: data))
            }
            try writer.finish()
            try LocalFileSystem.rename(partial, to: file)
            guard let meta = try LocalFileSystem.metadata(file) else {
                throw BundleError("the bundle \(file) vanished right after it was written")
            }
            return Result(packed: packed, left: left, file: file, size: meta.size, modifiedNanos: meta.modifiedNanos)
        } catch let error as BundleError {
            try? LocalFileSystem.removeFile(partial)
            throw error
        } catch {
            try? LocalFileSystem.removeFile(partial)
            throw BundleError("cannot build a bundle in \(LocalFileSystem.parentPath(file)): \(error)")
        }
    }
}
