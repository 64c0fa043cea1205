@testable import FerryControl
import Testing

/// The connection cap: idle and half-sent connections make room, busy ones never do.
@Suite("ConnectionRoster")
struct ConnectionRosterTests {
    static func id(_ admission: ConnectionRoster.Admission) -> Int? {
        if case let .admitted(id, _) = admission { return id }
        return nil
    }

    @Test("under the cap every connection is admitted, evicting none")
    func underTheCap() {
        var roster = ConnectionRoster(capacity: 3)
        for _ in 0..<3 {
            guard case .admitted(_, nil) = roster.admit() else {
                Issue.record("expected an admission without eviction")
                return
            }
        }
        #expect(roster.count == 3)
    }

    @Test("at the cap, the connection that has waited longest for a head makes room")
    func evictsTheLongestWaiting() throws {
        var roster = ConnectionRoster(capacity: 3)
        let first = try #require(Self.id(roster.admit()))
        let second = try #require(Self.id(roster.admit()))
        let third = try #require(Self.id(roster.admit()))
        roster.busy(first)           // an event stream
        roster.busy(second)
        roster.waiting(second)       // its response ended: now the newest waiter
        guard case let .admitted(fourth, evicting) = roster.admit() else {
            Issue.record("expected an admission")
            return
        }
        #expect(evicting == third)
        #expect(roster.count == 3)
        #expect(roster.isBusy(first))
        guard case let .admitted(_, next) = roster.admit() else {
            Issue.record("expected an admission")
            return
        }
        #expect(next == second)
        _ = fourth
    }

    @Test("when every connection is busy, the new one is refused")
    func refusesWhenAllBusy() throws {
        var roster = ConnectionRoster(capacity: 2)
        let first = try #require(Self.id(roster.admit()))
        let second = try #require(Self.id(roster.admit()))
        roster.busy(first)
        roster.busy(second)
        #expect(roster.admit() == .refused)
        roster.remove(first)
        #expect(Self.id(roster.admit()) != nil)
    }
}
