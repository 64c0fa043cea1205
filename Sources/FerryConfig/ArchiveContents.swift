/// Files that are archives already (`.zip`, `.tar.*`, `.7z`, …). Such files go to the
/// `archives` queue by the standard queue rules (`QueueRule.standard`), which use these
/// globs; FerryCore's extension (`Archiver/ArchiveContents.swift`) lists their members.
public enum ArchiveContents {
    /// Names of archive files (case-insensitive, like every glob).
    public static let fileGlobs = ["*.{zip,tar,tgz,tbz2,txz,7z,rar}", "*.tar.*"]
}
