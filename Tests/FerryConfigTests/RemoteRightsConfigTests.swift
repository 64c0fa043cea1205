@testable import FerryConfig
import FerryPlanning
import FerryPluginAPI
import Testing

/// `remote_rights`, `keep_versions`, `keep_days` as config.yml states them.
@Suite("Remote rights in config.yml")
struct RemoteRightsConfigTests {
    static func folderYAML(_ extra: String, mode: String = "push") -> String {
        "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: \(mode)\n" + extra
    }

    @Test("remote_rights defaults to all three; a list of fewer is read as given")
    func readsRights() throws {
        let standard = try ConfigLoaderTests.parse(Self.folderYAML(""))
        #expect(standard.folders[0].rights == .all)
        let appendOnly = try ConfigLoaderTests.parse(Self.folderYAML("    remote_rights: [read, write]\n"))
        #expect(appendOnly.folders[0].rights == RemoteRights(rights: [.read, .write]))
        #expect(appendOnly.folders[0].rights.keepsEveryVersion)
        let pruned = try ConfigLoaderTests.parse(Self.folderYAML("    keep_versions: 10\n    keep_days: 90\n"))
        #expect(pruned.folders[0].retention == VersionRetention(keepVersions: 10, keepDays: 90))
    }

    static let errorCases: [ConfigErrorCase] = [
        ConfigErrorCase(name: "a misspelt right", yaml: folderYAML("    remote_rights: [read, wirte]\n"),
                        line: 8, column: 27, mentions: "did you mean 'write'?", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "an unknown right", yaml: folderYAML("    remote_rights: [read, append]\n"),
                        line: 8, column: 27, mentions: "unknown right 'append' (expected read, write or delete)",
                        key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a right twice", yaml: folderYAML("    remote_rights: [read, read]\n"),
                        line: 8, column: 27, mentions: "listed twice", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "rights without read", yaml: folderYAML("    remote_rights: [write]\n"),
                        line: 8, column: 20, mentions: "must include read", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a push folder without write", yaml: folderYAML("    remote_rights: [read]\n"),
                        line: 8, column: 20, mentions: "add write, or set mode: pull", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a mapping for rights", yaml: folderYAML("    remote_rights: {read: true}\n"),
                        line: 8, column: 20, mentions: "expected a list of rights", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "retention without delete",
                        yaml: folderYAML("    remote_rights: [read, write]\n    keep_versions: 10\n"),
                        line: 9, column: 5, mentions: "needs delete in remote_rights", key: "folders.f.keep_versions"),
        ConfigErrorCase(name: "keep_days of zero", yaml: folderYAML("    keep_days: 0\n"),
                        line: 8, column: 16, mentions: "out of range", key: "folders.f.keep_days"),
    ]

    @Test("each bad rights or retention value is reported at its line and column", arguments: errorCases)
    func errorLocation(_ row: ConfigErrorCase) throws {
        try ConfigLoaderTests().errorLocation(row)
    }

    @Test("a pull folder may go without write")
    func pullWithoutWrite() throws {
        let config = try ConfigLoaderTests.parse(Self.folderYAML("    remote_rights: [read]\n", mode: "pull"))
        #expect(!config.folders[0].rights.mayWrite)
    }
}
