public import FerryPluginAPI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Copies bytes between two open files in chunks, reporting to an observer between chunks.
public enum ChunkedCopy {
    public static let chunkSize = 1 << 20

    /// Copies `count` bytes from `source` at `sourceOffset` to `destination` at
    /// `destinationOffset`. Throws `changedDuringTransfer` when the source ends early.
    /// `synced`: the caller syncs `destination` at the end, so its pages are sent to disk
    /// as the copy goes (`WriteBehind`).
    ///
    /// Copies of more than one chunk go through the kernel (`copy_file_range`) as far as it
    /// will: through a buffer, pushing a 1 GiB file to the same ext4 disk spent 0.8–2.4 s of
    /// kernel time copying out of it (rsync, which copies the same way, 1.1–1.7 s), against
    /// 0.3–0.5 s through the kernel's own copy, and on btrfs or XFS the kernel shares the
    /// blocks instead. Between two filesystems Linux refuses (`EXDEV`) and the buffer does
    /// it all; where the kernel stops early (a refusal, or a 0: the source ended, or a file
    /// it cannot copy from) the buffer goes on from there and finds out which. A copy of one
    /// chunk or less stays one read and one write: 100,000 small files pushed took 2%
    /// longer through the kernel's copy.
    public static func copy(
        from source: OpenFile, at sourceOffset: Int64,
        to destination: OpenFile, at destinationOffset: Int64,
        count: Int64, observer: any TransferObserver, synced: Bool = false
    ) throws(BackendError) {
        let copied = count <= Int64(chunkSize) ? 0 :
            try chunks(count: count, to: destination, at: destinationOffset, observer: observer,
                       sourceName: source.path, synced: synced) { done, want throws(BackendError) in
                try BackendError.catching {
                    try destination.copy(from: source, at: sourceOffset + done, to: destinationOffset + done,
                                         count: Int64(want)) ?? 0
                }
            }
        try copy(count: count - copied, to: destination, at: destinationOffset + copied, observer: observer,
                 sourceName: source.path, synced: synced) {
            buffer, done throws(BackendError) in
            try BackendError.catching { try source.read(into: &buffer, at: sourceOffset + copied + done) }
        }
    }

    /// The same from an upload's content (an encrypted file, made as it is read).
    public static func copy(
        from content: any UploadContent, at sourceOffset: Int64,
        to destination: OpenFile, at destinationOffset: Int64,
        count: Int64, observer: any TransferObserver, sourceName: String, synced: Bool = false
    ) throws(BackendError) {
        try copy(count: count, to: destination, at: destinationOffset, observer: observer, sourceName: sourceName,
                 synced: synced) {
            buffer, done throws(BackendError) in
            try content.read(into: &buffer, count: buffer.count, at: sourceOffset + done)
        }
    }

    /// Copies through a buffer: `read` fills it (as much of it as it can) with the source's
    /// bytes from `done` bytes into the copy. Throws when the source ends early.
    private static func copy(
        count: Int64, to destination: OpenFile, at destinationOffset: Int64, observer: any TransferObserver,
        sourceName: String, synced: Bool, read: (inout [UInt8], Int64) throws(BackendError) -> Int
    ) throws(BackendError) {
        // Sized to the file: zeroing a whole chunk for a 4 KiB file was a tenth of a small-file
        // push's CPU. Only the last chunk is shorter, and shrinking keeps the storage.
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(chunkSize), max(count, 0))))
        let done = try chunks(count: count, to: destination, at: destinationOffset, observer: observer,
                              sourceName: sourceName, synced: synced) { done, want throws(BackendError) in
            if buffer.count > want { buffer.removeLast(buffer.count - want) }
            let got = try read(&buffer, done)
            if got > 0 {
                try BackendError.catching { try destination.write(buffer, count: got, at: destinationOffset + done) }
            }
            return got
        }
        if done < count {
            throw BackendError(.changedDuringTransfer, "source became shorter while being copied", path: sourceName)
        }
    }

    /// The loop both ways of copying share: `move` puts up to `want` bytes, from `done`
    /// bytes into the copy, into `destination` and returns how many (0: it can go no
    /// further). Checks for cancellation, keeps a synced copy written behind, reports each
    /// chunk and takes the pause the observer asks for. Returns the bytes moved.
    private static func chunks(
        count: Int64, to destination: OpenFile, at destinationOffset: Int64, observer: any TransferObserver,
        sourceName: String, synced: Bool, move: (_ done: Int64, _ want: Int) throws(BackendError) -> Int
    ) throws(BackendError) -> Int64 {
        var behind = synced ? WriteBehind(from: destinationOffset) : nil
        var done: Int64 = 0
        while done < count {
            if observer.isCancelled {
                throw BackendError(.cancelled, "transfer cancelled", path: sourceName)
            }
            let got = try move(done, Int(min(Int64(chunkSize), count - done)))
            if got == 0 { break }
            done += Int64(got)
            do {
                try behind?.written(upTo: destinationOffset + done, of: destination)
            } catch {
                throw BackendError(error)
            }
            let pause = observer.bytesTransferred(got)
            if pause > .zero { sleepBlocking(pause) }
        }
        return done
    }

    /// Sleeps the current (blocking-I/O) thread.
    public static func sleepBlocking(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
