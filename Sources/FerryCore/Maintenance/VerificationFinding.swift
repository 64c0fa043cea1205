/// One difference `ferry verify` found between the journal and the two sides.
public struct VerificationFinding: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// The local file is not the version the journal recorded.
        case localDiffers
        /// The remote file is not the version the journal recorded (size, ETag or time).
        case remoteDiffers
        /// The journal says the file was synced, but it is gone locally.
        case localMissing
        /// The journal says the file was synced, but it is gone from the remote.
        case remoteMissing
        /// A local file the journal does not know.
        case localOrphan
        /// A remote file the journal does not know.
        case remoteOrphan
        /// A journal row for a file on neither side.
        case staleRow
        /// Both sides match the journal's metadata, but their bytes differ (`--hash`).
        case contentDiffers
    }

    public var path: String
    public var kind: Kind
    public var detail: String

    public init(path: String, kind: Kind, detail: String) {
        self.path = path
        self.kind = kind
        self.detail = detail
    }
}
