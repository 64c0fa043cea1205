/// What a backend can do beyond the required operations; discovered per backend and
/// recorded, so the core never guesses.
public struct BackendCapabilities: Hashable, Sendable, Codable {
    /// An interrupted upload can continue from where it stopped.
    public var resumableUpload: Bool
    /// A download can start at an offset (HTTP Range or a seek).
    public var rangedDownload: Bool
    /// Any byte range of a file can be read on its own (`Backend.read`), tied to the
    /// version listed: what an encrypted remote needs to continue a download at a
    /// segment and to read a file a window at a time.
    public var rangedRead: Bool
    /// Files can be renamed on the backend without sending them again.
    public var serverSideMove: Bool
    /// The modification time of an upload is kept.
    public var preservesModificationTime: Bool
    /// Listings carry an ETag or equivalent version tag per file.
    public var listingHasETags: Bool
    /// Uploads land under a temporary name and appear under the final name only when complete.
    public var atomicUpload: Bool
    /// Files can be copied on the backend without sending them again (`Backend.copy`).
    public var serverSideCopy: Bool
    /// Listings leave out names that start with `.` although the files are stored and
    /// served (nginx's WebDAV module): the core then reads its remote catalog of such names.
    public var listingOmitsHiddenNames: Bool
    /// The most files one `Backend.deleteFiles` call removes in a single request (S3's
    /// DeleteObjects: 1,000); 1 means one request per file, and the core sends deletes one
    /// by one.
    public var maxDeleteBatch: Int
    /// An upload that expects a new name (`UploadRequest.expectsNewFile`) is refused when
    /// another writer took the name meanwhile, in the same step that writes it.
    public var conditionalNewNames: Bool
    /// A move happens in one step on the server: nothing else can write the source or the
    /// target between its read and its write (not S3's copy and delete).
    public var atomicMove: Bool

    public init(
        resumableUpload: Bool = false,
        rangedDownload: Bool = false,
        rangedRead: Bool = false,
        serverSideMove: Bool = false,
        preservesModificationTime: Bool = false,
        listingHasETags: Bool = false,
        atomicUpload: Bool = false,
        serverSideCopy: Bool = false,
        listingOmitsHiddenNames: Bool = false,
        maxDeleteBatch: Int = 1,
        conditionalNewNames: Bool = false,
        atomicMove: Bool = false
    ) {
        self.resumableUpload = resumableUpload
        self.rangedDownload = rangedDownload
        self.rangedRead = rangedRead
        self.serverSideMove = serverSideMove
        self.preservesModificationTime = preservesModificationTime
        self.listingHasETags = listingHasETags
        self.atomicUpload = atomicUpload
        self.serverSideCopy = serverSideCopy
        self.listingOmitsHiddenNames = listingOmitsHiddenNames
        self.maxDeleteBatch = max(1, maxDeleteBatch)
        self.conditionalNewNames = conditionalNewNames
        self.atomicMove = atomicMove
    }

    private enum CodingKeys: String, CodingKey {
        case resumableUpload, rangedDownload, rangedRead, serverSideMove, preservesModificationTime, listingHasETags, atomicUpload
        case serverSideCopy, listingOmitsHiddenNames, maxDeleteBatch, conditionalNewNames, atomicMove
    }

    /// Capabilities written before a flag existed decode with that flag off (and deletes
    /// one at a time), so an external plugin built against an older Ferry keeps working.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func flag(_ key: CodingKeys) throws -> Bool { try container.decodeIfPresent(Bool.self, forKey: key) ?? false }
        self.init(resumableUpload: try flag(.resumableUpload), rangedDownload: try flag(.rangedDownload),
                  rangedRead: try flag(.rangedRead),
                  serverSideMove: try flag(.serverSideMove), preservesModificationTime: try flag(.preservesModificationTime),
                  listingHasETags: try flag(.listingHasETags), atomicUpload: try flag(.atomicUpload),
                  serverSideCopy: try flag(.serverSideCopy), listingOmitsHiddenNames: try flag(.listingOmitsHiddenNames),
                  maxDeleteBatch: try container.decodeIfPresent(Int.self, forKey: .maxDeleteBatch) ?? 1,
                  conditionalNewNames: try flag(.conditionalNewNames), atomicMove: try flag(.atomicMove))
    }

    /// Names of the capabilities that are on, for display.
    public var enabledNames: [String] {
        var names: [String] = []
        if resumableUpload { names.append("resumable-upload") }
        if rangedDownload { names.append("ranged-download") }
        if rangedRead { names.append("ranged-read") }
        if serverSideMove { names.append("server-side-move") }
        if preservesModificationTime { names.append("mtime") }
        if listingHasETags { names.append("etags") }
        if atomicUpload { names.append("atomic-upload") }
        if serverSideCopy { names.append("server-side-copy") }
        if listingOmitsHiddenNames { names.append("hides-dot-names") }
        if maxDeleteBatch > 1 { names.append("delete-batches") }
        if conditionalNewNames { names.append("new-file-condition") }
        if atomicMove { names.append("atomic-move") }
        return names
    }
}
