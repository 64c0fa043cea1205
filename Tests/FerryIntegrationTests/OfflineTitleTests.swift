@testable import ferry
import Testing

/// The live table's title while the remote is offline, once its next check is due and the
/// check is under way (issue 51: "next check in 0:00" for as long as the check took).
@Suite struct OfflineTitleTests {
    static func table(nextCheck: Double) -> ProgressTable {
        ProgressTable(title: "push photos", elapsedSeconds: 12, rows: [
            ProgressTable.Row(name: "photos", filesDone: 3, filesFailed: 0, filesTotal: 10, bytesDone: 30,
                              bytesTotal: 100, rate: nil, current: []),
        ], offlineNextCheck: nextCheck)
    }

    @Test(arguments: [0.0, 0.4, -3.0])
    func aDueCheckSaysItIsChecking(next: Double) {
        let title = Self.table(nextCheck: next).lines(width: 100)[0]
        #expect(title == "push photos  0:12  offline, checking again now", "\(title)")
    }

    @Test func aLaterCheckStillSaysWhen() {
        #expect(Self.table(nextCheck: 25).lines(width: 100)[0] == "push photos  0:12  offline, next check in 0:25")
    }
}
