/// When a run is held before its first write (`ChangeHold`): config.yml's `holds:`
/// section. Deletions have their own limit (`transfers.max_delete`, `--max-delete`).
public struct HoldPolicy: Sendable, Equatable {
    /// The largest share (0…1) of a side's files one run may replace; nil: no limit.
    public var replaceShare: Double? = 0.3
    /// Replacements below this count never hold: editing half of a ten-file folder is work,
    /// not damage.
    public var minFiles: Int = 50
    /// Look at the first bytes of a sample of the files a push would replace for content
    /// that no longer fits its type and looks encrypted.
    public var checksContent = true

    /// How many replaced files are sampled, and how many of them must look encrypted
    /// (at least this many, and at least half of those whose type Ferry can judge).
    public static let sampleSize = 32
    public static let minEncryptedLooking = 3

    public init(replaceShare: Double? = 0.3, minFiles: Int = 50, checksContent: Bool = true) {
        self.replaceShare = replaceShare
        self.minFiles = minFiles
        self.checksContent = checksContent
    }

    /// The replacement hold for one side, nil when the run may go on.
    public func replacementHold(replacing count: Int, of files: Int, side: String) -> ChangeHold? {
        guard let replaceShare, count >= minFiles else { return nil }
        let limit = max(minFiles - 1, Int((Double(files) * replaceShare).rounded(.down)))
        guard count > limit else { return nil }
        return ChangeHold(reason: .replacements, side: side, count: count, of: files, limit: limit)
    }

    /// The content hold over what the sampled files look like, nil when the run may go on.
    public func contentHold(_ looks: [(path: String, look: ContentLook)]) -> ChangeHold? {
        guard checksContent else { return nil }
        let judged = looks.filter { $0.look != .unknown }
        let encrypted = judged.filter { $0.look == .looksEncrypted }
        guard encrypted.count >= Self.minEncryptedLooking, encrypted.count * 2 >= judged.count else { return nil }
        return ChangeHold(reason: .encryptedLooking, side: "remote", count: encrypted.count, of: looks.count,
                          limit: max(Self.minEncryptedLooking - 1, (judged.count - 1) / 2),
                          examples: encrypted.map(\.path))
    }
}
