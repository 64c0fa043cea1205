import ArchiveCodec
@testable import FerryConfig
import Testing

@Suite("archive: in config.yml")
struct ArchiveRuleConfigTests {
    @Test("absent means off; present takes every key, with defaults for the rest")
    func reads() throws {
        #expect(try ConfigLoaderTests.parse("scan: {}").archive == nil)
        let rule = try #require(try ConfigLoaderTests.parse("""
            archive:
              match: ["*.txt", "logs/**"]
              older_than: 7d
              max_file_size: 64k
              bundle_size: 16M
              format: zip
              min_files: 3
            """).archive)
        #expect(rule == ArchiveRule(match: ["*.txt", "logs/**"], olderThan: .seconds(7 * 86_400), maxFileSize: 64 << 10,
                                    bundleSize: 16 << 20, format: .zip, minFiles: 3))
        #expect(try ConfigLoaderTests.parse("archive: {}").archive == ArchiveRule())
    }

    @Test("mistakes name the key, line and column", arguments: [
        ("archive:\n  format: rar\n", 2, 11, "tar.zst, tar.gz, zip"),
        ("archive:\n  older_than: soon\n", 2, 15, "duration"),
        ("archive:\n  bundle_size: 1k\n", 2, 16, "at least 64k"),
        ("archive:\n  min_files: 0\n", 2, 14, "out of range"),
        ("archive:\n  olderthan: 3d\n", 2, 3, "unknown key"),
        ("archive:\n  match: ['[a-']\n", 2, 11, "invalid glob"),
    ])
    func errors(_ yaml: String, _ line: Int, _ column: Int, _ mentions: String) {
        do {
            _ = try ConfigLoaderTests.parse(yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.line == line && error.column == column, "\(error)")
            #expect(error.description.contains(mentions), "\(error)")
        }
    }
}
