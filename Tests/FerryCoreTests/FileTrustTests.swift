import FerryPluginAPI
import FerrySystem
import Testing

/// Which files Ferry takes orders from (a config file, a plugin executable): the rule as
/// a table.
@Suite("file trust")
struct FileTrustTests {
    static let me: UInt32 = 1000

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var file: FileOwnership
        var folder: FileOwnership?
        var refused: String?
        var description: String { name }
    }

    static func item(_ owner: UInt32, _ mode: UInt32, privateGroup: Bool = false) -> FileOwnership {
        FileOwnership(owner: owner, group: 100, permissions: mode, groupIsPrivate: privateGroup)
    }

    static let cases: [Case] = [
        Case(name: "mine, 0644", file: item(me, 0o644), folder: item(me, 0o755), refused: nil),
        Case(name: "root's, 0644", file: item(0, 0o644), folder: item(0, 0o755), refused: nil),
        Case(name: "mine, 0600 in /tmp (sticky, writable by all)", file: item(me, 0o600), folder: item(0, 0o1777), refused: nil),
        Case(name: "mine, group-writable, my private group", file: item(me, 0o664, privateGroup: true), folder: item(me, 0o775, privateGroup: true),
             refused: nil),
        Case(name: "mine, writable by all", file: item(me, 0o666), folder: item(me, 0o755), refused: "it is writable by every user (mode 666)"),
        Case(name: "mine, group-writable, a shared group", file: item(me, 0o664), folder: item(me, 0o755),
             refused: "it is writable by its group (mode 664)"),
        Case(name: "another user's", file: item(1001, 0o644), folder: item(me, 0o755), refused: "it belongs to another user (uid 1001)"),
        Case(name: "mine, in a folder writable by all", file: item(me, 0o644), folder: item(me, 0o777),
             refused: "its folder is writable by every user (mode 777)"),
        Case(name: "mine, in another user's folder", file: item(me, 0o644), folder: item(1001, 0o755),
             refused: "its folder belongs to another user (uid 1001)"),
    ]

    @Test("owner and permissions decide", arguments: cases)
    func rule(_ testCase: Case) {
        #expect(FileTrust.distrust(file: testCase.file, folder: testCase.folder, user: Self.me) == testCase.refused)
    }

    @Test("root may use only root's own files, or nobody else's")
    func root() {
        #expect(FileTrust.distrust(file: Self.item(0, 0o644), folder: Self.item(0, 0o755), user: 0) == nil)
        #expect(FileTrust.distrust(file: Self.item(Self.me, 0o644), folder: Self.item(0, 0o755), user: 0) != nil)
    }
}
