import FerryPluginAPI
import FerrySystem
import Foundation

/// Moves and copies. A file's segments are bound to its stored path (format versions 3
/// and 4), so a file moved as it is would not authenticate under its new name: each one
/// is sealed again for the new name. The stored file is fetched into the scratch folder,
/// each segment opened under the old name and sealed under the new one (with a fresh
/// nonce prefix and salt) into another scratch file, which is uploaded to the new name;
/// a move then deletes the old one. Only ciphertext touches the disk. It costs a download
/// and an upload where the server would have renamed in place: what binding names costs.
extension EncryptedBackend {
    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let keys = try await unlock.keys(writing: true)
        let storedSource = try stored(source, keys)
        let storedDestination = try stored(destination, keys)
        // A backend without server-side moves refuses as it always did.
        guard inner.capabilities.serverSideMove else {
            try await inner.move(from: storedSource, to: storedDestination, overwrite: overwrite)
            return
        }
        try await sealAgain(storedSource, as: storedDestination, plaintextPath: source, overwrite: overwrite, keys: keys)
        try await inner.delete(storedSource)
    }

    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let keys = try await unlock.keys(writing: true)
        let storedSource = try stored(source, keys)
        let storedDestination = try stored(destination, keys)
        guard inner.capabilities.serverSideCopy else {
            try await inner.copy(from: storedSource, to: storedDestination, overwrite: overwrite)
            return
        }
        try await sealAgain(storedSource, as: storedDestination, plaintextPath: source, overwrite: overwrite, keys: keys)
    }

    /// Stores the file at `storedSource` again at `storedDestination`, sealed for that name.
    private func sealAgain(_ storedSource: RelativePath, as storedDestination: RelativePath, plaintextPath: RelativePath,
                           overwrite: Bool, keys: EncryptionKeys) async throws(BackendError) {
        guard let entry = try await inner.stat(storedSource) else {
            throw BackendError(.notFound, "no file to move or copy", path: plaintextPath.string)
        }
        // Each file below a folder is bound to its path: a folder would have to be sealed
        // again file by file, and nothing in Ferry moves a remote folder.
        guard entry.kind == .file else {
            throw BackendError(.unsupported, "an encrypted remote's folders are not moved or copied", path: plaintextPath.string)
        }
        if !overwrite, try await inner.stat(storedDestination) != nil {
            throw BackendError(.alreadyExists, "the target exists", path: storedDestination.string)
        }
        let (fetched, _) = try scratch.newFile()
        defer { scratch.remove(fetched) }
        _ = try await inner.download(DownloadRequest(source: storedSource, partialFile: fetched, offset: 0, expected: entry,
                                                     flush: false),
                                     observer: NullTransferObserver())
        let (resealed, output) = try scratch.newFile()
        defer { scratch.remove(resealed) }
        let modified = entry.modifiedNanos ?? Int64(SystemClock().wallTime() * 1e9)
        let size = try await BlockingIO.run { () throws(BackendError) -> Int64 in
            try BackendError.catching { () throws -> Int64 in
                let input = try OpenFile(fetched, mode: .read)
                let size = try Self.reseal(input, size: try input.metadata().size, into: output, keys: keys, from: storedSource.string,
                                           to: storedDestination.string, path: plaintextPath.string)
                try output.setModificationTime(nanos: modified)
                return size
            }
        }
        _ = try await inner.upload(UploadRequest(source: resealed, destination: storedDestination, size: size,
                                                 modifiedNanos: modified, mayResume: false, expectsNewFile: !overwrite),
                                   observer: NullTransferObserver())
    }

    /// Writes the stored file `input` (bound to `from`, or of a version bound to no path)
    /// into `output` as the same plaintext sealed for `to`, a segment at a time; its size.
    static func reseal(_ input: OpenFile, size: Int64, into output: OpenFile, keys: EncryptionKeys, from: String, to: String,
                       path: String) throws(BackendError) -> Int64 {
        guard let plaintextSize = ContentFormat.plaintextSize(ciphertextSize: size) else {
            throw EncryptionFailure.authentication("\(size) bytes is no encrypted file's size", path: path)
        }
        do {
            var header = [UInt8](repeating: 0, count: ContentFormat.headerSize)
            try ContentStream.readExactly(input, into: &header, count: header.count, at: 0)
            guard let old = SegmentCipher(keys: keys, header: header, storedPath: from) else {
                throw EncryptionFailure.authentication("not a Ferry encrypted file, or a newer version", path: path)
            }
            let new = SegmentCipher(keys: keys, cipher: old.cipher, storedPath: to)
            try output.write(new.header, count: new.header.count, at: 0)
            let segments = ContentFormat.segmentCount(plaintextSize: plaintextSize)
            let stride = ContentFormat.segmentSize + ContentFormat.tagSize
            var buffer = [UInt8](repeating: 0, count: stride)
            var written = Int64(ContentFormat.headerSize)
            for index in 0..<segments {
                let start = Int64(ContentFormat.headerSize) + index * Int64(stride)
                let count = Int(min(Int64(stride), size - start))
                try ContentStream.readExactly(input, into: &buffer, count: count, at: start)
                let isLast = index == segments - 1
                let plaintext = try old.open(Data(buffer[0..<count]), index: UInt32(index), isLast: isLast, path: path)
                let sealed = [UInt8](try new.seal(plaintext, index: UInt32(index), isLast: isLast))
                try output.write(sealed, count: sealed.count, at: written)
                written += Int64(sealed.count)
            }
            if try output.metadata().size > written { try output.truncate(to: written) }
            return written
        } catch let error as BackendError {
            throw error
        } catch let error as SystemError {
            throw BackendError(error)
        } catch {
            throw BackendError(.io, "\(error)", path: path)
        }
    }
}
