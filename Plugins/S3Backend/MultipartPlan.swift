/// How a large file is cut into parts: all parts `partSize` bytes but the last, at least
/// 5 MiB each (S3's minimum for all but the last part), at most 10,000 parts (S3's
/// maximum): the part size grows, in whole MiB, for files that would need more.
public struct MultipartPlan: Sendable, Equatable {
    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumParts: Int64 = 10_000

    public let fileSize: Int64
    public let partSize: Int64

    public init(fileSize: Int64, preferredPartSize: Int64) {
        self.fileSize = fileSize
        let needed = (fileSize + Self.maximumParts - 1) / Self.maximumParts
        let mebibyte: Int64 = 1 << 20
        let roundedUp = (needed + mebibyte - 1) / mebibyte * mebibyte
        partSize = max(Self.minimumPartSize, preferredPartSize, roundedUp)
    }

    public var partCount: Int {
        fileSize == 0 ? 1 : Int((fileSize + partSize - 1) / partSize)
    }

    /// The byte range of part `number` (1-based, as S3 numbers them).
    public func range(ofPart number: Int) -> (offset: Int64, length: Int64) {
        let offset = Int64(number - 1) * partSize
        return (offset, min(partSize, fileSize - offset))
    }
}
