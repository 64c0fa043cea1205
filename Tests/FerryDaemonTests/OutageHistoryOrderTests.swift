import FerryDaemon
import FerryEngine
import FerryJournal
import FerrySystem
import FerryTestSupport
import Testing

/// The daemon writes each remote outage to the run history as the engine reports it, from
/// event sinks that cannot wait: the writes must land in the order of the reports.
@Suite("Outage history order")
struct OutageHistoryOrderTests {
    /// A state folder, and the sink a runtime gives its runs: the board and the recorder
    /// behind it.
    struct Harness {
        let folder = TemporaryDirectory("outage-history")
        let state: StateFolder
        let outages: OutageRecorder
        let sink: BoardEventSink

        init() {
            state = StateFolder(directory: folder.path)
            let clock = SystemClock()
            let board = DaemonStatusBoard(stateFolder: state, command: "test", clock: clock)
            outages = OutageRecorder(state: state)
            sink = BoardEventSink(inner: DiscardingEventSink(), board: board, outages: outages, clock: clock)
        }

        func recorded(since: Double = 0) async throws -> [OutageRecord] {
            defer { withExtendedLifetime(folder) {} }
            return try await state.history().outages(since: since)
        }
    }

    @Test("a remote that goes offline and comes back at once, many times over, leaves every outage closed")
    func beginningsBeforeEnds() async throws {
        let harness = Harness()
        let outages = harness.outages, sink = harness.sink
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await outages.run() }
            for _ in 0..<40 {
                sink.emit(.remoteOffline(remote: "nas", message: "refused", nextProbeSeconds: 1))
                sink.emit(.remoteOnline(remote: "nas", offlineSeconds: 0))
            }
            // Stopped while reports may still be queued, as a runtime is: the last call
            // writes what run() had not.
            group.cancelAll()
        }
        await outages.writeQueued()
        let outages40 = try await harness.recorded()
        #expect(outages40.count == 40, "every outage reported is written once")
        #expect(outages40.allSatisfy { $0.endedAt != nil }, "an end written before its beginning leaves the outage open")
    }

    @Test("an offline report for a remote already offline begins no second outage")
    func repeatedOfflineIsOneOutage() async throws {
        let harness = Harness()
        let outages = harness.outages, sink = harness.sink
        for _ in 0..<3 { sink.emit(.remoteOffline(remote: "nas", message: "refused", nextProbeSeconds: 1)) }
        await outages.writeQueued()
        let open = try await harness.recorded()
        #expect(open.count == 1 && open[0].endedAt == nil)
        sink.emit(.remoteOnline(remote: "nas", offlineSeconds: 3))
        sink.emit(.remoteOnline(remote: "nas", offlineSeconds: 3))
        await outages.writeQueued()
        let closed = try await harness.recorded()
        #expect(closed.count == 1 && closed[0].endedAt != nil)
    }
}
