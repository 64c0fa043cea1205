/// A run stopped before its first write because what it would do looks like damage rather
/// than work: most of a side's files deleted (an unmounted disk), most of them replaced (a
/// folder rewritten wholesale), or changed files whose bytes look encrypted (ransomware).
/// The run goes on only when a person says so (`--accept-changes`, or the control API).
public struct ChangeHold: Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, Equatable {
        case deletions
        case replacements
        case encryptedLooking = "encrypted_looking"
    }

    public var reason: Reason
    /// "remote" or "local folder": the side that would lose its versions.
    public var side: String
    /// How many files the run would delete or replace (for `encryptedLooking`: how many of
    /// the sampled changed files look encrypted).
    public var count: Int
    /// Out of how many (the side's files; for `encryptedLooking`, the files sampled).
    public var of: Int
    /// The most the policy lets through without a hold.
    public var limit: Int
    /// A few of the paths concerned, for the message.
    public var examples: [String] = []
    /// A two-way sync, where either side may be the one that went missing.
    public var bothSides = false

    public var message: String {
        let example = examples.isEmpty ? "" : " (e.g. \(examples.prefix(3).joined(separator: ", ")))"
        switch reason {
        case .deletions:
            return """
                held: refusing to delete \(count) of \(of) files on the \(side) (limit \(limit)); \
                check that \(bothSides ? "both sides are" : "the source is") mounted and complete \
                (an unmounted disk looks like everything was deleted), then raise --max-delete \
                or run again with --accept-changes (--force-delete)
                """
        case .replacements:
            return """
                held: the run would replace \(count) of \(of) files on the \(side) (limit \(limit)); \
                if the folder was meant to change wholesale, run again with --accept-changes
                """
        case .encryptedLooking:
            return """
                held: \(count) of \(of) changed files sampled no longer look like their type and their bytes look \
                encrypted\(example); nothing was sent — check the folder for ransomware or damage, restore it, \
                or run again with --accept-changes if the change is wanted
                """
        }
    }

    public var description: String { message }
}
