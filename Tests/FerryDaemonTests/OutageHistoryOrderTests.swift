import FerryDaemon
import FerryJournal
import FerrySystem
import FerryTestSupport
import Testing

/// The daemon's status board writes each remote outage to the run history as the engine
/// reports it, from event sinks that cannot wait: the writes must land in the order of the
/// reports.
@Suite("Outage history order")
struct OutageHistoryOrderTests {
    @Test("a remote that goes offline and comes back at once, many times over, leaves every outage closed")
    func beginningsBeforeEnds() async throws {
        let folder = TemporaryDirectory("outage-order")
        let state = StateFolder(directory: folder.path)
        let board = DaemonStatusBoard(stateFolder: state, command: "test", recordsOutages: true, clock: SystemClock())
        for _ in 0..<40 {
            board.remoteOffline("nas", message: "refused")
            board.remoteOnline("nas")
        }
        await board.outageWritesFinished()
        let outages = try await state.history().outages(since: 0)
        #expect(!outages.isEmpty)
        #expect(outages.allSatisfy { $0.endedAt != nil }, "an end written before its beginning leaves the outage open")
    }
}
