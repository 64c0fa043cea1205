/// Space a download must leave free on the local disk (`transfers.min_free_space`): a
/// fixed number of bytes, or a share of the filesystem's size.
public enum FreeSpaceReserve: Sendable, Equatable {
    case bytes(Int64)
    case share(Double)

    /// Syncthing's default: keep 1% of the disk free.
    public static let standard = FreeSpaceReserve.share(0.01)

    /// The bytes to keep free on a filesystem of `totalBytes`.
    public func bytes(ofFilesystemSize totalBytes: Int64) -> Int64 {
        switch self {
        case let .bytes(count): return count
        case let .share(share): return Int64((Double(totalBytes) * share).rounded(.up))
        }
    }

    /// Why a download of `needed` more bytes must not start, or nil when it fits with the
    /// reserve left over.
    public func refusal(needed: Int64, available: Int64, totalBytes: Int64) -> String? {
        let reserve = bytes(ofFilesystemSize: totalBytes)
        guard available - needed < reserve else { return nil }
        return "not enough free space: \(available) bytes free, the file needs \(needed) and \(reserve) must stay free "
            + "(transfers.min_free_space); free some space or lower min_free_space, then run again"
    }
}
