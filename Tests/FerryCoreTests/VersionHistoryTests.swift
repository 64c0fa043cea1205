import FerryConfig
import FerryPluginAPI
import Testing
@testable import FerryCore
@testable import FerryEngine

/// Saved version names, the spans a file's versions were current, the moment a restore
/// picks, and retention. Pure values.
@Suite("Version history")
struct VersionHistoryTests {
    /// 2026-12-05T13:44:55.123Z
    static let t: Int64 = 1_796_478_295_123

    @Test("a saved name carries its replacement time in UTC, to the millisecond, and reads back")
    func namingRoundTrip() throws {
        let path = try VersionName.savedPath(of: try RelativePath("DCIM/IMG 1.jpg"), replacedAtMillis: Self.t,
                                             root: try RelativePath("phone"))
        #expect(path.string == "phone/.ferry-versions/DCIM/IMG 1.jpg.20261205-134455.123Z")
        let parsed = try #require(VersionName.parse(path.name))
        #expect(parsed.name == "IMG 1.jpg")
        #expect(parsed.replacedAtMillis == Self.t)
    }

    @Test("saved names sort as their times do", arguments: [1, 999, 1000, 59_999, 86_400_000])
    func namesSort(_ later: Int64) {
        #expect(VersionName.stamp(Self.t) < VersionName.stamp(Self.t + later))
    }

    @Test("names that are no saved version are not taken for one",
          arguments: ["IMG.jpg", "IMG.jpg.20261205-134455Z", "IMG.jpg.20261305-134455.123Z", "20261205-134455.123Z",
                      "IMG.jpg-20261205-134455.123Z"])
    func rejectsOtherNames(_ name: String) {
        #expect(VersionName.parse(name) == nil)
    }

    static func saved(_ replaced: Int64, size: Int64, modified: Int64? = nil) -> VersionHistory.Saved {
        VersionHistory.Saved(replacedAtMillis: replaced, size: size, modifiedMillis: modified, path: "v\(replaced)")
    }

    @Test("each version is current from the previous one's replacement; the first from its modification time")
    func spans() {
        let history = VersionHistory(saved: [Self.saved(Self.t + 2000, size: 2), Self.saved(Self.t + 1000, size: 1, modified: Self.t)],
                                     current: (3, Self.t + 2500))
        #expect(history.versions.map(\.size) == [1, 2, 3])
        #expect(history.versions.map(\.fromMillis) == [Self.t, Self.t + 1000, Self.t + 2000])
        #expect(history.versions.map(\.untilMillis) == [Self.t + 1000, Self.t + 2000, nil])
        #expect(history.versions.last?.isCurrent == true)
    }

    @Test("a first version listed with a time after its replacement (a copy stamped when made) starts just before it")
    func firstStartCapped() {
        let history = VersionHistory(saved: [Self.saved(Self.t + 1000, size: 1, modified: Self.t + 1000)], current: (2, nil))
        #expect(history.versions[0].fromMillis == Self.t + 999)
    }

    @Test("the version current at a moment: each shown start gives its own version; before the first, none")
    func versionAtMoment() {
        let history = VersionHistory(saved: [Self.saved(Self.t + 1000, size: 1, modified: Self.t), Self.saved(Self.t + 2000, size: 2)],
                                     current: (3, nil))
        for version in history.versions {
            #expect(history.version(at: version.fromMillis) == version)
        }
        #expect(history.version(at: Self.t + 1999)?.size == 2)
        #expect(history.version(at: Self.t + 1_000_000)?.size == 3)
        #expect(history.version(at: Self.t - 1) == nil)
    }

    @Test("a file with saved versions and none under its name was current until its last replacement")
    func noCurrent() {
        let history = VersionHistory(saved: [Self.saved(Self.t + 1000, size: 1, modified: Self.t)], current: nil)
        #expect(history.version(at: Self.t + 500)?.size == 1)
        #expect(history.version(at: Self.t + 1000) == nil)
    }

    @Test("retention keeps the newest keep_versions and drops those older than keep_days")
    func pruning() {
        let day: Int64 = 86_400_000
        let saved = (0..<5).map { Self.saved(Self.t + Int64($0) * day, size: Int64($0)) }
        let now = Self.t + 4 * day + 1
        let byCount = VersionPruning.expired(saved, retention: VersionRetention(keepVersions: 2), nowMillis: now)
        #expect(Set(byCount.map(\.size)) == [0, 1, 2])
        let byAge = VersionPruning.expired(saved, retention: VersionRetention(keepDays: 2), nowMillis: now)
        #expect(Set(byAge.map(\.size)) == [0, 1, 2])
        #expect(VersionPruning.expired(saved, retention: VersionRetention(), nowMillis: now).isEmpty)
    }

    @Test("times are shown in UTC with milliseconds and read back in the forms people type",
          arguments: [("2026-12-05T13:44:55.123Z", t), ("2026-12-05 13:44:55.123", t), ("20261205-134455.123Z", t),
                      ("2026-12-05T13:44:55Z", t - 123), ("2026-12-05T13:44", t - 55_123), ("2026-12-05", t - 49_495_123)])
    func timeForms(_ text: String, _ expected: Int64) {
        #expect(VersionTime.parse(text) == expected)
        #expect(VersionTime.format(Self.t) == "2026-12-05T13:44:55.123Z")
    }

    @Test("text that is no time is refused", arguments: ["yesterday", "2026-13-01", "2026-02-30", "2026-12-05T25:00", "2026-12-05T13:44:55.123+02:00"])
    func badTimes(_ text: String) {
        #expect(VersionTime.parse(text) == nil)
    }
}
