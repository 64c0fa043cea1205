internal import CArchive

/// Process-wide facts about the linked libarchive.
public enum ArchiveLibrary {
    /// libarchive's version line, e.g. `libarchive 3.6.2 zlib/1.2.13 liblzma/5.4.1 …`.
    public static var versionDescription: String {
        String(cString: archive_version_details())
    }
}
