/// The byte ranges a download over several streams still has to fetch, handed out in
/// order, and how far from the start the file is written without a gap: the plan the
/// streams of `ParallelRangedDownload` share. A pure value; the streams hold it under a lock.
struct SegmentQueue: Sendable {
    /// The file's full size.
    let size: Int64
    let segmentLength: Int64
    /// Where the next segment handed out starts.
    private(set) var nextStart: Int64
    /// Every byte below this is written (and flushed); what a `PartialFileLedger` records.
    private(set) var validBytes: Int64
    /// Segments finished ahead of `validBytes` (other streams still fetch the ones between):
    /// first byte → one past the last.
    private var finishedAhead: [Int64: Int64] = [:]

    /// Segments of `segmentLength` bytes (the last one shorter) from `start` to `size`.
    init(from start: Int64, size: Int64, segmentLength: Int64) {
        precondition(start >= 0 && start <= size && segmentLength > 0)
        self.size = size
        self.segmentLength = segmentLength
        nextStart = start
        validBytes = start
    }

    /// The next segment to fetch; nil once all are handed out.
    mutating func next() -> ClosedRange<Int64>? {
        guard nextStart < size else { return nil }
        let end = min(size, nextStart + segmentLength)
        defer { nextStart = end }
        return nextStart...(end - 1)
    }

    /// Records a segment as written; returns true when `validBytes` moved.
    @discardableResult
    mutating func finished(_ segment: ClosedRange<Int64>) -> Bool {
        finishedAhead[segment.lowerBound] = segment.upperBound + 1
        let before = validBytes
        while let end = finishedAhead.removeValue(forKey: validBytes) { validBytes = end }
        return validBytes != before
    }

    var isComplete: Bool { validBytes == size }

    /// A segment length for `remaining` bytes over `streams` streams: about four segments
    /// per stream (so a stream that finishes early takes work from the others' share,
    /// and an interruption loses little), at least 4 MiB (a request per few MiB costs
    /// nothing next to the bytes) and at most 64 MiB (what a SIGKILL can cost per stream).
    static func segmentLength(remaining: Int64, streams: Int) -> Int64 {
        min(64 << 20, max(4 << 20, remaining / Int64(max(1, streams) * 4)))
    }
}
