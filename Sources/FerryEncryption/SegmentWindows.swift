import FerryPluginAPI
import Foundation

/// An encrypted file read a window of segments at a time (`Backend.read`): which stored
/// bytes each window is, and its plaintext once every segment in it is checked. Pure
/// arithmetic over `ContentFormat`; the reading is `EncryptedBackend`'s.
///
/// A download continued from `resumeAt` plaintext bytes starts at the segment that holds
/// that byte: the segments before it were checked when they were written, and a segment
/// is only checked whole, so the bytes of a segment cut short are fetched again.
struct SegmentWindows: Sequence, Sendable {
    /// Segments per window: 2 MiB of plaintext, 2 MiB and 512 bytes stored. Of 1, 2 and
    /// 4 MiB windows (three or four in flight), 2 MiB pulled 1 GiB from nginx fastest.
    static let segmentsPerWindow: Int64 = 32

    let plaintextSize: Int64
    /// The first segment to fetch.
    let firstSegment: Int64
    let segmentCount: Int64
    let segmentsPerWindow: Int64

    init(plaintextSize: Int64, resumeAt offset: Int64, segmentsPerWindow: Int64 = SegmentWindows.segmentsPerWindow) {
        self.plaintextSize = plaintextSize
        segmentCount = ContentFormat.segmentCount(plaintextSize: plaintextSize)
        let kept = Swift.min(Swift.max(0, offset), plaintextSize) / Int64(ContentFormat.segmentSize)
        // An empty file, or one whose every byte is kept, is still read from its last
        // segment: the tag that says "last" is what proves the file ends there.
        firstSegment = Swift.min(kept, segmentCount - 1)
        self.segmentsPerWindow = Swift.max(1, segmentsPerWindow)
    }

    /// The plaintext bytes kept from before: everything before the first segment fetched.
    var keptBytes: Int64 { firstSegment * Int64(ContentFormat.segmentSize) }

    struct Window: Equatable, Sendable {
        /// Segments `segments.lowerBound ..< segments.upperBound`.
        let segments: Range<Int64>
        /// Their bytes in the stored file (which starts with the header).
        let stored: Range<Int64>
        /// Where their plaintext goes in the file.
        let plaintextOffset: Int64
        let includesLast: Bool
    }

    func makeIterator() -> AnyIterator<Window> {
        var next = firstSegment
        let stride = Int64(ContentFormat.segmentSize + ContentFormat.tagSize)
        let cipherSize = ContentFormat.ciphertextSize(plaintextSize: plaintextSize)
        let header = Int64(ContentFormat.headerSize)
        let count = segmentCount
        let perWindow = segmentsPerWindow
        return AnyIterator {
            guard next < count else { return nil }
            let end = Swift.min(count, next + perWindow)
            defer { next = end }
            return Window(segments: next..<end,
                          stored: (header + next * stride)..<Swift.min(cipherSize, header + end * stride),
                          plaintextOffset: next * Int64(ContentFormat.segmentSize), includesLast: end == count)
        }
    }

    /// The plaintext of `window`, from its stored bytes `sealed`; throws "authentication
    /// failed" unless every segment is exactly what was sealed at its place in this file.
    static func open(_ sealed: Data, window: Window, cipher: SegmentCipher, path: String) throws(BackendError) -> [UInt8] {
        guard sealed.count == window.stored.count else {
            throw EncryptionFailure.authentication("a window of \(sealed.count) bytes where \(window.stored.count) were stored",
                                                   path: path)
        }
        let stride = ContentFormat.segmentSize + ContentFormat.tagSize
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(sealed.count)
        var start = sealed.startIndex
        for index in window.segments {
            let end = Swift.min(sealed.endIndex, start + stride)
            plaintext.append(contentsOf: try cipher.open(sealed[start..<end], index: UInt32(index),
                                                         isLast: window.includesLast && index == window.segments.upperBound - 1,
                                                         path: path))
            start = end
        }
        return plaintext
    }
}
