import FerryCore
import FerryEngine
import FerryPluginAPI
import Testing

/// What a folder gets when config.yml leaves a setting out.
@Suite("folder pair defaults")
struct FolderPairDefaultsTests {
    @Test("remote_check: a pull or sync folder lists within an hour, a push folder within a day")
    func remoteCheck() {
        #expect(FolderPair.standardRemoteCheck(for: .sync) == .seconds(3600))
        #expect(FolderPair.standardRemoteCheck(for: .pull) == .seconds(3600))
        #expect(FolderPair.standardRemoteCheck(for: .push) == .seconds(24 * 3600))
    }
}
