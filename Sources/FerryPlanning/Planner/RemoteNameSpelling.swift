/// One file whose name the two sides spell in different Unicode forms: `café.jpg` with é
/// as one character (NFC, as most Linux programs write it) in the local folder, and as e
/// plus a combining accent (NFD, as a Mac client uploads it) on the remote (issue 49).
///
/// Swift compares the two spellings as equal, so the planner takes them for one file, as
/// a person does; but Linux, nginx and S3 keep names byte for byte, so a request made with
/// the local spelling names another file on the remote: a push wrote a second copy beside
/// the remote's, and a pull asked for a file that was not there, found it gone, and
/// reported nothing to do while the contents stayed different. So the row keeps the
/// remote's spelling (`FileRecord.remoteSpelling`) as the last listing gave it, and every
/// request to the remote names the file that way; local writes keep the row's own path.
///
/// A server that normalizes names (Nextcloud and macOS shares store NFC) answers to either
/// spelling and lists one: the row follows what it lists, and the name stays one file.
extension Planner {
    /// The remote's spelling of the row's `path` when the listing (`listed`) spells it with
    /// other bytes (another Unicode form of the same name), else nil.
    static func remoteSpelling(listed: String?, path: String) -> String? {
        guard let listed, !listed.hasSameUTF8(as: path) else { return nil }
        return listed
    }
}

extension String {
    /// Whether the two strings are the same bytes: `==` compares canonically, and holds
    /// for the NFC and NFD spellings of one name.
    func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // Every row of a no-op plan is compared: native strings' bytes, without the view's iterator.
        let contiguous = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in mine.elementsEqual(theirs) }
        }
        return (contiguous ?? nil) ?? utf8.elementsEqual(other.utf8)
    }
}
