import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// A local file as its encrypted form (`ContentFormat`), made a segment at a time as the
/// backend underneath reads it: no scratch copy, so a large file is read once and its
/// ciphertext never goes through the page cache (a 1 GiB scratch file was 1 GiB of dirty
/// pages for the kernel to throttle and write back while the upload ran).
///
/// The header (nonce prefix and salt) is drawn once per value, or taken from an earlier
/// upload of the same version that this one continues, so every read of a range gives the
/// same bytes: a resent request or a ranged `PUT` reads it again. The source is opened at
/// the first read, on the backend's blocking thread, and checked to be the planned version
/// then and by `verifySource`.
final class EncryptedContent: UploadContent {
    /// The ciphertext's size.
    let size: Int64
    /// The file's header: its nonce prefix and salt.
    let header: [UInt8]
    private let path: String
    private let plaintextSize: Int64
    private let modifiedNanos: Int64
    private let segments: Int64
    private let state: Mutex<State>

    private struct State {
        let cipher: SegmentCipher
        var source: OpenFile?
        var sourceInode: UInt64 = 0
        /// The sealed segment last made (ciphertext ‖ tag, `SegmentCipher.seal`'s slice), and
        /// its index (-1: none yet): reads come in pieces smaller than a segment, in order.
        var sealedIndex: Int64 = -1
        var sealed = Data()
        /// Sized to the file's first segment: a small file's upload zeroed 64 KiB for a few.
        var plaintext: [UInt8]
    }

    /// `header`: an earlier upload's (`EncryptedUploadCheckpoint`), to make the same bytes
    /// again from the same plaintext; nil: a new nonce prefix and salt.
    init(source path: String, size plaintextSize: Int64, modifiedNanos: Int64, keys: EncryptionKeys, header: [UInt8]? = nil) {
        self.path = path
        self.plaintextSize = plaintextSize
        self.modifiedNanos = modifiedNanos
        size = ContentFormat.ciphertextSize(plaintextSize: plaintextSize)
        segments = ContentFormat.segmentCount(plaintextSize: plaintextSize)
        let plaintextBuffer = [UInt8](repeating: 0, count: Int(min(Int64(ContentFormat.segmentSize), plaintextSize)))
        let cipher = header.flatMap { SegmentCipher(keys: keys, header: $0) } ?? SegmentCipher(keys: keys)
        self.header = cipher.header
        state = Mutex(State(cipher: cipher, plaintext: plaintextBuffer))
    }

    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(BackendError) -> Int {
        try state.withLock { state throws(BackendError) -> Int in
            precondition(count <= buffer.count, "the buffer is smaller than the count asked for")
            var filled = 0
            var position = offset
            while filled < count && position < size {
                let taken: Int
                if position < Int64(ContentFormat.headerSize) {
                    taken = Self.copy(state.cipher.header, from: Int(position), into: &buffer, at: filled, upTo: count)
                } else {
                    let stride = Int64(ContentFormat.segmentSize + ContentFormat.tagSize)
                    let index = (position - Int64(ContentFormat.headerSize)) / stride
                    if index != state.sealedIndex { try seal(index, in: &state) }
                    let within = Int((position - Int64(ContentFormat.headerSize)) % stride)
                    taken = Self.copy(state.sealed, from: within, into: &buffer, at: filled, upTo: count)
                }
                filled += taken
                position += Int64(taken)
            }
            return filled
        }
    }

    func verifySource() throws(BackendError) {
        try state.withLock { state throws(BackendError) in
            let source = try opened(&state)
            try BackendError.catching { () throws in
                let after = try source.metadata()
                guard after.size == plaintextSize, after.modifiedNanos == modifiedNanos,
                      let current = try LocalFileSystem.metadata(path), current.inode == state.sourceInode else {
                    throw BackendError(.changedDuringTransfer, "the file changed while it was being encrypted", path: path)
                }
            }
        }
    }

    /// The source, opened at the first need and checked to be the planned version.
    private func opened(_ state: inout State) throws(BackendError) -> OpenFile {
        if let source = state.source { return source }
        let source = try BackendError.catching { try OpenFile(path, mode: .read) }
        let meta = try BackendError.catching { try source.metadata() }
        guard meta.size == plaintextSize, meta.modifiedNanos == modifiedNanos else {
            throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: path)
        }
        state.source = source
        state.sourceInode = meta.inode
        return source
    }

    private func seal(_ index: Int64, in state: inout State) throws(BackendError) {
        let source = try opened(&state)
        let start = index * Int64(ContentFormat.segmentSize)
        let count = Int(min(Int64(ContentFormat.segmentSize), plaintextSize - start))
        try BackendError.catching { try ContentStream.readExactly(source, into: &state.plaintext, count: count, at: start) }
        // The segment before is let go first: while it lived, the new one's buffers went
        // elsewhere on the heap and the sealed box's assembly (inside swift-crypto) copied
        // them again (27% of a 1 GiB upload's samples in one profile, 4% without).
        state.sealed = Data()
        state.sealedIndex = -1
        state.sealed = try state.cipher.seal(state.plaintext[0..<count], index: UInt32(index), isLast: index == segments - 1)
        state.sealedIndex = index
    }

    /// Copies `bytes` from offset `start` into `buffer` at `filled`, at most up to `limit`,
    /// with one `memcpy`: the slice assignment this replaced went through generic code.
    /// Returns the bytes copied.
    private static func copy(_ bytes: some ContiguousBytes, from start: Int, into buffer: inout [UInt8],
                             at filled: Int, upTo limit: Int) -> Int {
        bytes.withUnsafeBytes { source in
            let taken = min(source.count - start, limit - filled)
            buffer.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: filled).copyMemory(from: source.baseAddress!.advanced(by: start), byteCount: taken)
            }
            return taken
        }
    }
}
