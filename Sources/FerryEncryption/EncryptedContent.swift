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
    /// Where the ciphertext is stored: every segment is bound to it.
    private let storedPath: String
    private let plaintextSize: Int64
    private let modifiedNanos: Int64
    private let segments: Int64
    private let keys: EncryptionKeys
    private let state: Mutex<State>

    private struct State {
        let cipher: SegmentCipher
        var source: OpenFile?
        var sourceInode: UInt64 = 0
        /// The segments last sealed (ciphertext ‖ tag each, `SegmentCipher.seal`'s slices),
        /// from index `sealedStart` (-1: none yet): reads come in order, in pieces smaller
        /// than a batch.
        var sealedStart: Int64 = -1
        var sealed: [Data] = []
        /// A one-segment file's plaintext, sized to it: a small file's upload zeroed 64 KiB
        /// for a few. Larger files read each batch into one of `buffers`.
        var plaintext: [UInt8]
        /// The next batches, in order, each being sealed on a thread of its own.
        var ahead: [SealingAhead] = []
    }

    /// Segments read and sealed at once.
    static let segmentsPerBatch = 16
    /// Batches sealed ahead of the one being read, each whole on one thread: sealing (the
    /// cipher, and the copies swift-crypto's sealed box makes) was half of a 1 GiB encrypted
    /// push's CPU time, on one core, between the reads and writes. One batch ahead, split
    /// over two threads, kept 1.35 of two cores busy; the threads met at every batch.
    static let batchesAhead = 2
    /// Plaintext buffers of batches, kept for the next: zeroing a fresh megabyte for each
    /// batch was 3% of an encrypted push's samples.
    private let buffers = Mutex<[[UInt8]]>([])

    /// `header`: an earlier upload's (`EncryptedUploadCheckpoint`), to make the same bytes
    /// again from the same plaintext, with the version it names; nil: a new nonce prefix and
    /// salt, sealed with `cipher` and bound to `storedPath`, where the ciphertext goes.
    init(source path: String, size plaintextSize: Int64, modifiedNanos: Int64, keys: EncryptionKeys,
         cipher: ContentCipher, storedPath: String, header: [UInt8]? = nil) {
        self.path = path
        self.storedPath = storedPath
        self.plaintextSize = plaintextSize
        self.modifiedNanos = modifiedNanos
        size = ContentFormat.ciphertextSize(plaintextSize: plaintextSize)
        segments = ContentFormat.segmentCount(plaintextSize: plaintextSize)
        let plaintextBuffer = [UInt8](repeating: 0, count: Int(min(Int64(ContentFormat.segmentSize), plaintextSize)))
        self.keys = keys
        let cipher = header.flatMap { SegmentCipher(keys: keys, header: $0, storedPath: storedPath) }
            ?? SegmentCipher(keys: keys, cipher: cipher, storedPath: storedPath)
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
                    if state.sealedStart < 0 || index < state.sealedStart || index >= state.sealedStart + Int64(state.sealed.count) {
                        try seal(from: index, in: &state)
                    }
                    let within = Int((position - Int64(ContentFormat.headerSize)) % stride)
                    taken = Self.copy(state.sealed[Int(index - state.sealedStart)], from: within, into: &buffer, at: filled, upTo: count)
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

    /// Makes the batch of segments that starts at `first` the sealed one: the batch sealed
    /// ahead when it is that one, else sealed now (a range read again drops the batches
    /// ahead); then keeps `batchesAhead` batches being sealed on other threads, so that
    /// sealing goes on while this one is sent.
    private func seal(from first: Int64, in state: inout State) throws(BackendError) {
        let source = try opened(&state)
        // The batch before is let go first: while it lived, the new one's buffers went
        // elsewhere on the heap and the sealed box's assembly (inside swift-crypto) copied
        // them again (27% of a 1 GiB upload's samples in one profile, 4% without).
        state.sealed = []
        state.sealedStart = -1
        var ahead = state.ahead
        state.ahead = []
        if let next = ahead.first, next.first == first {
            ahead.removeFirst()
            state.sealed = try next.wait().get()
        } else {
            ahead = []
            if segments == 1 {
                // A small file: one segment, sealed here with the buffer kept for it.
                try BackendError.catching { try ContentStream.readExactly(source, into: &state.plaintext, count: Int(plaintextSize), at: 0) }
                state.sealed = [try state.cipher.seal(state.plaintext[0..<Int(plaintextSize)], index: 0, isLast: true)]
            } else {
                // Nothing is ahead yet, and the reader waits: two threads seal this one.
                state.sealed = try batch(from: first, source: source, threads: 2)
            }
        }
        state.sealedStart = first
        var next = ahead.last.map { $0.first + Int64(Self.segmentsPerBatch) } ?? first + Int64(state.sealed.count)
        while ahead.count < Self.batchesAhead && next < segments {
            let sealing = SealingAhead(first: next)
            ahead.append(sealing)
            let content = self, from = next
            DispatchQueue.global().async {
                sealing.finish(Result { () throws(BackendError) in try content.batch(from: from, source: source, threads: 1) })
            }
            next += Int64(Self.segmentsPerBatch)
        }
        state.ahead = ahead
    }

    /// The sealed segments of the batch that starts at `first`: its plaintext in one read,
    /// its segments on `threads` threads. Uses no state, so it runs on any thread.
    private func batch(from first: Int64, source: OpenFile, threads: Int) throws(BackendError) -> [Data] {
        let segmentSize = Int64(ContentFormat.segmentSize)
        let count = Int(min(Int64(Self.segmentsPerBatch), segments - first))
        let start = first * segmentSize
        let length = Int(min(Int64(count) * segmentSize, plaintextSize - start))
        var plaintext = buffers.withLock { $0.popLast() } ?? [UInt8](repeating: 0, count: Self.segmentsPerBatch * ContentFormat.segmentSize)
        defer { buffers.withLock { $0.append(plaintext) } }
        try BackendError.catching { try ContentStream.readExactly(source, into: &plaintext, count: length, at: start) }
        let last = segments - 1
        let results = Mutex<[Int: Result<Data, BackendError>]>([:])
        let keys = self.keys, header = self.header, storedPath = self.storedPath, read = plaintext
        DispatchQueue.concurrentPerform(iterations: min(threads, count)) { part in
            // Each thread its own cipher (`SymmetricKey` is not `Sendable`): one HKDF.
            guard let cipher = SegmentCipher(keys: keys, header: header, storedPath: storedPath) else { return }
            for offset in stride(from: part, to: count, by: threads) {
                let from = offset * ContentFormat.segmentSize
                let segment = read[from..<min(length, from + ContentFormat.segmentSize)]
                let index = first + Int64(offset)
                let result: Result<Data, BackendError>
                do throws(BackendError) {
                    result = .success(try cipher.seal(segment, index: UInt32(index), isLast: index == last))
                } catch {
                    result = .failure(error)
                }
                results.withLock { $0[offset] = result }
            }
        }
        let sealed = results.withLock { $0 }
        return try (0..<count).map { offset throws(BackendError) in
            guard let result = sealed[offset] else { throw BackendError(.io, "cannot encrypt: a segment was not sealed") }
            return try result.get()
        }
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

/// One batch of segments being sealed on other threads; `wait` blocks until it is done.
final class SealingAhead: Sendable {
    let first: Int64
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<[Data], BackendError>?>(nil)

    init(first: Int64) { self.first = first }

    func finish(_ result: Result<[Data], BackendError>) {
        outcome.withLock { $0 = result }
        done.signal()
    }

    /// Called once, by the reader that takes the batch.
    func wait() -> Result<[Data], BackendError> {
        done.wait()
        return outcome.withLock { $0 } ?? .failure(BackendError(.io, "cannot encrypt: a batch was not sealed"))
    }
}
