import FerryPluginAPI
import FerrySystem
import Foundation

/// Decrypts a stored file into a local one, a segment at a time: memory stays at about a
/// megabyte whatever the file's size. (Encryption is `EncryptedContent`'s.)
enum ContentStream {
    /// Segments gathered before one write.
    static let segmentsPerWrite = 16

    /// Decrypts `input` (a whole stored file of `cipherSize` bytes) into `output` from
    /// offset 0, checking every segment before its plaintext is written. Returns the
    /// plaintext size. `storedPath` is where the file was read (a file bound to its path
    /// authenticates only there); `path` names the remote file in errors. `synced`: the
    /// caller syncs `output` at the end, so its pages go to disk as it is written (`WriteBehind`).
    static func decrypt(_ input: OpenFile, cipherSize: Int64, into output: OpenFile, keys: EncryptionKeys,
                        storedPath: String, path: String, observer: any TransferObserver,
                        synced: Bool = false) throws(BackendError) -> Int64 {
        guard let plaintextSize = ContentFormat.plaintextSize(ciphertextSize: cipherSize) else {
            throw EncryptionFailure.authentication("\(cipherSize) bytes is no encrypted file's size", path: path)
        }
        do {
            var header = [UInt8](repeating: 0, count: ContentFormat.headerSize)
            try readExactly(input, into: &header, count: header.count, at: 0)
            guard let cipher = SegmentCipher(keys: keys, header: header, storedPath: storedPath) else {
                throw EncryptionFailure.authentication("not a Ferry encrypted file, or a newer version", path: path)
            }
            let segments = ContentFormat.segmentCount(plaintextSize: plaintextSize)
            let stride = ContentFormat.segmentSize + ContentFormat.tagSize
            var buffer = [UInt8](repeating: 0, count: stride)
            var pending: [UInt8] = []
            var written: Int64 = 0
            var behind = synced ? WriteBehind(from: 0) : nil
            for index in 0..<segments {
                if observer.isCancelled { throw BackendError(.cancelled, "stopped", path: path) }
                let start = Int64(ContentFormat.headerSize) + index * Int64(stride)
                let count = Int(min(Int64(stride), cipherSize - start))
                try readExactly(input, into: &buffer, count: count, at: start)
                let plain = try cipher.open(Data(buffer[0..<count]), index: UInt32(index), isLast: index == segments - 1, path: path)
                pending.append(contentsOf: plain)
                if index % Int64(segmentsPerWrite) == Int64(segmentsPerWrite - 1) || index == segments - 1 {
                    try output.write(pending, count: pending.count, at: written)
                    written += Int64(pending.count)
                    try behind?.written(upTo: written, of: output)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            return written
        } catch let error as BackendError {
            throw error
        } catch let error as SystemError {
            throw BackendError(error)
        } catch {
            throw BackendError(.io, "\(error)", path: path)
        }
    }

    static func readExactly(_ file: OpenFile, into buffer: inout [UInt8], count: Int, at offset: Int64) throws {
        var done = 0
        var chunk = [UInt8](repeating: 0, count: 0)
        while done < count {
            if done == 0 {
                // The common case: one read fills the buffer's front.
                let read = try file.read(into: &buffer, at: offset)
                if read == 0 { break }
                done = min(read, count)
                continue
            }
            chunk = [UInt8](repeating: 0, count: count - done)
            let read = try file.read(into: &chunk, at: offset + Int64(done))
            if read == 0 { break }
            buffer.replaceSubrange(done..<(done + read), with: chunk[0..<read])
            done += read
        }
        guard done >= count else {
            throw BackendError(.changedDuringTransfer, "the file is shorter than expected", path: file.path, retryable: true)
        }
    }
}
