import FerryCore
import FerryEngine
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A way to the remote on which the device's run crashes right after one upload reached
/// the remote: the server has the file, the journal never heard of it, as after a `kill -9`
/// between the server's answer and the record.
final class CrashAfterUpload: WrapsBackend {
    let inner: InMemoryBackend
    let path: String
    private let run = Mutex<Task<Result<RunSummary, RunError>, Never>?>(nil)

    init(inner: InMemoryBackend, path: String) {
        self.inner = inner
        self.path = path
    }

    /// Starts the run that is to crash; the task is stored before the run can reach the
    /// upload (it waits for the lock).
    func start(_ body: @escaping @Sendable () async throws(RunError) -> RunSummary) -> Task<Result<RunSummary, RunError>, Never> {
        run.withLock { stored in
            let task = Task { () async -> Result<RunSummary, RunError> in
                do throws(RunError) { return .success(try await body()) } catch { return .failure(error) }
            }
            stored = task
            return task
        }
    }

    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let result = try await inner.upload(request, observer: observer)
        guard request.destination.string == path else { return result }
        run.withLock { $0?.cancel() }
        throw BackendError(.cancelled, "the device crashed (simulated)", path: path)
    }
}

@Suite("a run stopped part-way, taken up by the next")
struct StoppedRunTests {
    static let t0: Double = 1_767_225_600

    /// Found as a flake of the three-device test on Apache: a sync killed just after a new
    /// file reached the server. The next sync trusted the change markers (no other device
    /// wrote since), took the journal for the remote side, uploaded the file again as new,
    /// found the name taken and kept both copies: a conflict copy of identical bytes. The
    /// folders a stopped run wrote into are listed by the next, whatever the markers say.
    @Test("a file sent by a run that crashed before recording it: the next sync lists its folder and finds the same bytes, no conflict copy")
    func unrecordedUploadIsListed() async throws {
        let work = TemporaryDirectory("ferry-stopped")
        // A remote that lists its own times (Apache): the unrecorded copy does not look
        // like the local file, only its bytes say it is the same.
        let remote = InMemoryBackend(keepsModificationTimes: false)
        let a = try SimulatedDevice(index: 0, in: work.path)
        let c = try SimulatedDevice(index: 2, in: work.path)
        try a.write("the shared file\n", at: "notes/base.txt", modified: Self.t0)
        _ = try await a.sync(through: remote, start: Self.t0 + 1000)
        _ = try await c.sync(through: remote, start: Self.t0 + 1100)
        #expect(c.content(of: "notes/base.txt") == "the shared file\n")

        let sent = "written on c, sent by a run that crashed\n"
        try c.write(sent, at: "notes/new.txt", modified: Self.t0 + 1150)
        let crashing = CrashAfterUpload(inner: remote, path: "notes/new.txt")
        let crashed = await crashing.start { () async throws(RunError) -> RunSummary in
            try await c.sync(through: crashing, start: Self.t0 + 1200)
        }.value
        if case let .success(summary) = crashed {
            #expect(summary.uploadedFiles == 0, "the crash was to come before the upload was recorded")
        }
        #expect(remote.files["notes/new.txt"].map { String(decoding: $0.data, as: UTF8.self) } == sent)

        let next = try await c.sync(through: remote, start: Self.t0 + 1300)
        #expect(next.keptBothFiles == 0 && next.conflictFiles == 0, "\(next.conflicts)")
        #expect(next.changedDuringRun == 0, "the plan is to see the copy, not the upload to run into it")
        let names = Set(remote.files.keys.filter { !$0.hasPrefix(".ferry") })
        #expect(names == ["notes/base.txt", "notes/new.txt"])
        #expect(try c.holdings().files == ["notes/base.txt": "the shared file\n", "notes/new.txt": sent])

        // Settled: the copy is recorded as this device's, and nothing is left to do.
        let settled = try await c.sync(through: remote, start: Self.t0 + 1400)
        #expect(settled.uploadedFiles == 0 && settled.downloadedFiles == 0 && settled.conflictFiles == 0 && settled.succeeded)
    }
}
