import FerryConfig
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import FerryCore
@testable import FerryEngine

/// Write leases (`WriteLease`, `WriteLeaseKeeper`) over the in-memory remote, which lists
/// every finished write as S3 and WebDAV servers do. Time is a test clock that moves only
/// when a keeper pauses (`SteppedClock`), so who holds the lease and when a crashed
/// holder's file is taken for stale never depend on how fast the machine is.
@Suite("write leases: one writer at a time on stores that cannot refuse a taken name")
struct WriteLeaseTests {
    static let duration = 1.0

    struct Setup {
        let work = TemporaryDirectory("ferry-lease")
        let remote = InMemoryBackend()

        /// The folder's `remote_rights`: without `delete`, a lease is given back by emptying its file.
        var rights = RemoteRights.all

        func keeper(_ writer: String, clock: any FerryClock = SteppedClock(), duration: Double = WriteLeaseTests.duration,
                    through backend: (any Backend)? = nil) -> WriteLeaseKeeper {
            var pair = FolderPair(name: "photos", localRoot: work.child(writer), backend: backend ?? remote, remoteRoot: .root,
                                  mode: .sync, ignore: [])
            pair.rights = rights
            let store = RemoteCatalogStore(pair: pair, stateDirectory: work.child("state-" + writer), pairId: 1, host: writer)
            return WriteLeaseKeeper(store: store, writer: writer, device: "device " + writer, duration: duration, clock: clock)
        }

        /// A, holding the lease, and B, waiting for it: each time B pauses, A renews, so B
        /// always finds A's file changed since its last look.
        func holderAndWaiter(through backend: (any Backend)? = nil) async throws -> (WriteLeaseKeeper, WriteLeaseKeeper) {
            let clock = SteppedClock()
            let a = keeper("a", clock: clock)
            _ = try await a.take(maxWait: 0)
            let waiting = SteppedClock(sharing: clock) { await a.renew() }
            return (a, keeper("b", clock: waiting, through: backend))
        }

        var leaseFiles: [String] {
            remote.files.keys.filter { $0.hasPrefix(".ferry-catalog/") && $0.hasSuffix(WriteLease.suffix) }.sorted()
        }
    }

    @Test("names and content: a lease file names its writer and device; other files are not leases")
    func namesAndContent() {
        #expect(WriteLease.writer(ofFileName: WriteLease.fileName(writer: "ab12-1")) == "ab12-1")
        #expect(WriteLease.writer(ofFileName: "ab12-1.3.changes") == nil)
        #expect(WriteLease.writer(ofFileName: WriteLease.suffix) == nil)
        #expect(WriteLease.device(in: WriteLease.encode(device: "nas\nevil", renewal: 3)) == "nasevil")
        #expect(WriteLease.device(in: Array("something else\n".utf8)) == nil)
        #expect(WriteLease.encode(device: "nas", renewal: 1) != WriteLease.encode(device: "nas", renewal: 2),
                "a renewal changes the file, so that waiters see the holder alive")
    }

    @Test("the look: another writer's lease is live until it stayed the same for a whole duration")
    func look() throws {
        let entries = [
            RemoteEntry(path: try RelativePath(".ferry-catalog/a.lease"), kind: .file, size: 40, modifiedNanos: 1, etag: "x"),
            RemoteEntry(path: try RelativePath(".ferry-catalog/b.lease"), kind: .file, size: 40, modifiedNanos: 1, etag: "y"),
            RemoteEntry(path: try RelativePath(".ferry-catalog/b.3.changes"), kind: .file, size: 40, modifiedNanos: 1, etag: "z"),
        ]
        let leases = WriteLease.listed(in: entries)
        #expect(leases.map(\.writer) == ["a", "b"])
        let fresh = WriteLease.look(at: entries, own: "a", firstSeen: [WriteLease.seenKey(leases[1]): 10], now: 10.5, duration: 1)
        #expect(fresh.live.map(\.writer) == ["b"] && fresh.stale.isEmpty && fresh.ownListed)
        let old = WriteLease.look(at: entries, own: "a", firstSeen: [WriteLease.seenKey(leases[1]): 10], now: 11, duration: 1)
        #expect(old.live.isEmpty && old.stale.map(\.writer) == ["b"])
        let stranger = WriteLease.look(at: entries, own: "c", firstSeen: [:], now: 0, duration: 1)
        #expect(stranger.live.count == 2 && !stranger.ownListed)
    }

    @Test("a free lease is taken at once and given back; then the next writer takes it")
    func takeAndRelease() async throws {
        let setup = Setup()
        let a = setup.keeper("a")
        let b = setup.keeper("b")
        _ = try await a.take(maxWait: 0)
        #expect(await a.loss() == nil)
        #expect(setup.leaseFiles == [".ferry-catalog/a.lease"])
        await a.release()
        #expect(setup.leaseFiles == [])
        _ = try await b.take(maxWait: 0)
        #expect(await b.loss() == nil)
        #expect(setup.leaseFiles == [".ferry-catalog/b.lease"])
    }

    @Test("a store that fails a request while the lease is taken (a 500) is asked again: the lease is taken")
    func takenThroughATransientFailure() async throws {
        let setup = Setup()
        let failing = FailsFirstListing(inner: setup.remote)
        let a = setup.keeper("a", through: failing)
        _ = try await a.take(maxWait: 10)
        #expect(await a.loss() == nil)
        #expect(failing.failedListings == 1)
        #expect(setup.leaseFiles == [".ferry-catalog/a.lease"])
    }

    @Test("without delete: a lease is given back by emptying its file, which is no lease to the next writer")
    func givenBackWithoutDelete() async throws {
        var setup = Setup()
        setup.rights = RemoteRights(rights: [.read, .write])
        let clock = SteppedClock()
        let a = setup.keeper("a", clock: clock)
        let b = setup.keeper("b", clock: clock)
        _ = try await a.take(maxWait: 0)
        await a.release()
        #expect(setup.leaseFiles == [".ferry-catalog/a.lease"])
        #expect(setup.remote.files[".ferry-catalog/a.lease"]?.data.isEmpty == true)
        _ = try await b.take(maxWait: 0)
        #expect(clock.now() < Self.duration, "B took it at once: the empty file is no live lease")
        #expect(await b.loss() == nil)
        // A comes back while B holds it and renews: A steps back by emptying its own file again.
        let waiting = SteppedClock(sharing: clock) { await b.renew() }
        let again = setup.keeper("a", clock: waiting)
        await #expect(throws: WriteLeaseKeeper.Refusal.self) { _ = try await again.take(maxWait: 0) }
        #expect(setup.remote.files[".ferry-catalog/a.lease"]?.data.isEmpty == true)
        #expect(setup.remote.files[".ferry-catalog/b.lease"]?.data.isEmpty == false)
    }

    @Test("a holder that renews keeps it: the waiter gives up, says who holds it, and leaves no file behind")
    func heldWhileRenewed() async throws {
        let setup = Setup()
        let (a, b) = try await setup.holderAndWaiter()
        let told = LockedValue<[String?]>([])
        await #expect {
            _ = try await b.take(maxWait: 0) { name in told.withLock { $0.append(name) } }
        } throws: { error in
            (error as? WriteLeaseKeeper.Refusal)?.holder == "device a"
        }
        // The waiter said who holds it, once, before it gave up.
        #expect(told.value == ["device a"])
        await a.renew()
        #expect(await a.loss() == nil, "the holder still holds it")
        #expect(setup.leaseFiles == [".ferry-catalog/a.lease"])
    }

    @Test("the holder rewrote its file between the waiter's listing and its read: the waiter looks again and still names it")
    func holderNamedThoughItsFileChanged() async throws {
        let setup = Setup()
        // On S3 the read of the version listed fails once the holder has renewed since
        // the listing (seen on moto under load): here the first read of a lease does.
        let (_, b) = try await setup.holderAndWaiter(through: RenewedBeforeRead(inner: setup.remote))
        await #expect {
            _ = try await b.take(maxWait: 0)
        } throws: { error in
            (error as? WriteLeaseKeeper.Refusal)?.holder == "device a"
        }
    }

    @Test("a holder that crashed: its file, unchanged for a duration, is taken for stale; the holder, had it lived, knows it lost")
    func crashedHolder() async throws {
        let setup = Setup()
        let clock = SteppedClock()
        let a = setup.keeper("a", clock: clock)
        let b = setup.keeper("b", clock: clock)
        _ = try await a.take(maxWait: 0)
        // A stops renewing (a kill): B waits past the lease's duration and takes it.
        _ = try await b.take(maxWait: 0)
        #expect(clock.now() >= Self.duration)
        #expect(setup.leaseFiles == [".ferry-catalog/b.lease"])
        // Had A lived: its renewal finds its file gone, and it stops writing.
        await a.renew()
        #expect(await a.loss()?.contains("crashed device") == true, "A's file is gone: A lost the lease")
        #expect(await b.loss() == nil)
        // B, holding it, goes half a duration without a renewal: it must stop writing.
        clock.advance(by: Self.duration / 2 + 0.1)
        #expect(await b.loss() != nil, "half a duration without renewal: B must not write")
    }

    @Test("several writers racing for the lease: never two holders at once, every one gets it in turn")
    func race() async throws {
        let setup = Setup()
        let writers = ["a", "b", "c", "d"]
        // The real clock and a lease far longer than the work: every writer holds it in turn,
        // none is taken for crashed.
        let keepers = writers.map { setup.keeper($0, clock: SystemClock(), duration: 600) }
        let log = EventLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (writer, keeper) in zip(writers, keepers) {
                group.addTask {
                    _ = try await keeper.take(maxWait: 60)
                    log.add("in " + writer)
                    // Work while holding it: long enough for the others to try.
                    for _ in 0..<5 { await Task.yield() }
                    try await Task.sleep(for: .milliseconds(50))
                    log.add("out " + writer)
                    await keeper.release()
                }
            }
            try await group.waitForAll()
        }
        let events = log.events
        #expect(events.count == 8)
        for index in stride(from: 0, to: events.count, by: 2) {
            let writer = events[index].dropFirst(3)
            #expect(events[index] == "in " + writer && events[index + 1] == "out " + writer, "\(events)")
        }
        #expect(setup.leaseFiles == [])
    }
}

/// Events from several tasks, in the order they happened.
private final class EventLog: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var events: [String] { lines.withLock { $0 } }
}

/// A clock that moves only when a keeper pauses, by the pause, after running `onPause`
/// (another keeper's renewal, say). Clocks made with `sharing:` read one time.
private final class SteppedClock: FerryClock {
    private let time: Mutex<Double>
    private let shared: SteppedClock?
    private let onPause: (@Sendable () async -> Void)?

    init() {
        time = Mutex(0)
        shared = nil
        onPause = nil
    }

    init(sharing clock: SteppedClock, onPause: @escaping @Sendable () async -> Void) {
        time = Mutex(0)
        shared = clock
        self.onPause = onPause
    }

    func now() -> Double { shared?.now() ?? time.withLock { $0 } }

    func advance(by seconds: Double) { time.withLock { $0 += seconds } }

    func wallTime() -> Double { SystemClock().wallTime() + now() }

    func sleep(until deadline: Double) async {
        await onPause?()
        if let shared { return await shared.sleep(until: deadline) }
        time.withLock { $0 = max($0, deadline) }
    }
}

/// The in-memory remote whose first read of a lease file fails as a read of a version
/// that was rewritten since it was listed.
private final class RenewedBeforeRead: WrapsBackend {
    let inner: InMemoryBackend
    private let leaseReads = Mutex(0)

    init(inner: InMemoryBackend) {
        self.inner = inner
    }

    func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        if request.source.name.hasSuffix(WriteLease.suffix), leaseReads.withLock({ $0 += 1; return $0 }) == 1 {
            throw BackendError(.changedDuringTransfer, "the lease was rewritten since it was listed", path: request.source.description)
        }
        return try await inner.download(request, observer: observer)
    }
}

/// The in-memory remote whose first listing fails as a store's 500 does.
private final class FailsFirstListing: WrapsBackend {
    let inner: InMemoryBackend
    private let listings = Mutex(0)

    init(inner: InMemoryBackend) {
        self.inner = inner
    }

    var failedListings: Int { min(1, listings.withLock { $0 }) }

    func list(_ path: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        if listings.withLock({ $0 += 1; return $0 }) == 1 {
            throw BackendError(.io, "HTTP 500 on a listing", path: path.description, retryable: true)
        }
        return try await inner.list(path)
    }
}
