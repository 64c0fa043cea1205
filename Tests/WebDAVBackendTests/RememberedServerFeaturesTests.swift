import CurlTransport
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import WebDAVBackend

/// A `BackendMemory` held in the test: what the backend keeps is the subject here; the
/// state folder's store has tests of its own (StateFolderBackendMemoryTests).
private final class HeldMemory: BackendMemory {
    let values = Mutex<[String: Data]>([:])
    func recall(_ key: String) -> Data? { values.withLock { $0[key] } }
    func remember(_ key: String, _ value: Data) { values.withLock { $0[key] = value } }
    var onlyRecord: RememberedServerFeatures? {
        values.withLock { $0.values.first }.flatMap { try? JSONDecoder().decode(RememberedServerFeatures.self, from: $0) }
    }
}

@Suite("WebDAV server features remembered between runs")
struct RememberedServerFeaturesTests {
    static let features = WebDAVServerFeatures(rangedPut: .unsupported("HTTP 501 on a ranged PUT"), modificationTimeProperty: .supported,
                                               honoursOCMtime: false, hidesDotNames: true, atomicPut: .supported,
                                               newNameCondition: .unsupported("PUT is not atomic"))
    static let probedAt = 1_800_000_000.0

    static func record(server: String = "nginx/1.22.1", probedAt: Double = probedAt) throws -> Data {
        try #require(RememberedServerFeatures(server: server, probedAt: probedAt, features: features).encoded())
    }

    @Test("remembered findings stand for a day while the server gives the same name, every feature as it was")
    func trustedWhileFresh() throws {
        let data = try Self.record()
        #expect(RememberedServerFeatures.trusted(data, server: "nginx/1.22.1", now: Self.probedAt)?.features == Self.features)
        #expect(RememberedServerFeatures.trusted(data, server: "nginx/1.22.1", now: Self.probedAt + 86_399)?.features == Self.features)
        #expect(RememberedServerFeatures.trusted(data, server: "nginx/1.22.1", now: Self.probedAt + 86_400) == nil)
    }

    @Test("another server name, none, no record, a damaged one, another version, or a probe time ahead of the clock: probe again")
    func distrusted() throws {
        let data = try Self.record()
        #expect(RememberedServerFeatures.trusted(data, server: "nginx/1.24.0", now: Self.probedAt) == nil)
        #expect(RememberedServerFeatures.trusted(data, server: nil, now: Self.probedAt) == nil)
        #expect(RememberedServerFeatures.trusted(data, server: "", now: Self.probedAt) == nil)
        #expect(RememberedServerFeatures.trusted(nil, server: "nginx/1.22.1", now: Self.probedAt) == nil)
        #expect(RememberedServerFeatures.trusted(data.prefix(data.count / 2), server: "nginx/1.22.1", now: Self.probedAt) == nil)
        let otherVersion = Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"version\":1", with: "\"version\":2").utf8)
        #expect(otherVersion != data)
        #expect(RememberedServerFeatures.trusted(otherVersion, server: "nginx/1.22.1", now: Self.probedAt) == nil)
        let unknownAnswer = Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"atomicPut\":\"yes\"", with: "\"atomicPut\":\"maybe\"").utf8)
        #expect(unknownAnswer != data)
        #expect(RememberedServerFeatures.trusted(unknownAnswer, server: "nginx/1.22.1", now: Self.probedAt) == nil)
        #expect(RememberedServerFeatures.trusted(data, server: "nginx/1.22.1", now: Self.probedAt - 3_600) == nil, "clock set back")
    }

    @Test("a backend that lives for days (the daemon) probes again once its findings stop standing; callers meanwhile share one probe")
    func recordProbesAgainAfterADay() async throws {
        let clock = Mutex(Self.probedAt)
        let probes = Mutex(0)
        let record = ServerFeatureRecord(wallTime: { clock.withLock { $0 } })
        let probe: @Sendable () async -> Result<ServerFeatureRecord.Found, BackendError> = {
            let count = probes.withLock { $0 += 1; return $0 }
            var features = Self.features
            features.hidesDotNames = count.isMultiple(of: 2)
            return .success(.init(features: features, until: clock.withLock { $0 } + RememberedServerFeatures.standsFor))
        }
        #expect(record.current == nil)
        async let first = record.features(probe: probe)
        async let second = record.features(probe: probe)
        let (a, b) = try await (first, second)
        #expect(a == b && probes.withLock { $0 } == 1)
        clock.withLock { $0 += RememberedServerFeatures.standsFor - 1 }
        #expect(try await record.features(probe: probe) == a)
        #expect(record.current == a && probes.withLock { $0 } == 1)
        clock.withLock { $0 += 1 }
        #expect(record.current == nil, "stopped standing: the fast paths that read it wait for a probe")
        let again = try await record.features(probe: probe)
        #expect(probes.withLock { $0 } == 2 && again.hidesDotNames != a.hidesDotNames)
        #expect(record.current == again)
    }

    @Test("a failed probe is not kept: the next caller probes")
    func failedProbeIsNotKept() async throws {
        let probes = Mutex(0)
        let record = ServerFeatureRecord(wallTime: { Self.probedAt })
        let failing: @Sendable () async -> Result<ServerFeatureRecord.Found, BackendError> = {
            probes.withLock { $0 += 1 }
            return .failure(BackendError(.unreachable, "no answer", retryable: true))
        }
        await #expect(throws: BackendError.self) { try await record.features(probe: failing) }
        await #expect(throws: BackendError.self) { try await record.features(probe: failing) }
        #expect(probes.withLock { $0 } == 2 && record.current == nil)
    }

    @Test("nginx: the first backend probes and remembers; the next one, with the same memory, sends no probe and uploads as the first did",
          .integration)
    func secondBackendSkipsProbe() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let scratch = TemporaryDirectory("ferry-dav-remembered")
        let memory = HeldMemory()
        let url = proxy.url("/dav/remembered/")

        let first = try WebDAVBackend(baseURL: url, settings: CurlTransportSettings(), memory: memory)
        _ = try await first.upload(try upload(scratch, seed: 1, to: "IMG_1.jpg"), observer: NullTransferObserver())
        #expect(probeRequests(proxy.requests).count > 0)
        let record = try #require(memory.onlyRecord)
        #expect(record.server.contains("nginx"), "\(record.server)")
        #expect(record.features == first.serverFeatureRecord.current)

        let mark = proxy.requests.count
        let second = try WebDAVBackend(baseURL: url, settings: CurlTransportSettings(), memory: memory)
        _ = try await second.upload(try upload(scratch, seed: 2, to: "IMG_2.jpg"), observer: NullTransferObserver())
        let sent = Array(proxy.requests.dropFirst(mark))
        #expect(probeRequests(sent).isEmpty, "\(sent)")
        #expect(second.serverFeatureRecord.current == first.serverFeatureRecord.current)
        // Atomic PUT as remembered: the new file went in one PUT to its name, no MOVE.
        #expect(sent.contains { $0.hasPrefix("PUT /dav/remembered/IMG_2.jpg") }, "\(sent)")
        #expect(!sent.contains { $0.hasPrefix("MOVE") }, "\(sent)")
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/remembered").sorted() == ["IMG_1.jpg", "IMG_2.jpg"])
    }

    @Test("nginx: findings remembered for a server of another name are not used: the backend probes and remembers anew",
          .integration)
    func otherServerProbesAgain() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let scratch = TemporaryDirectory("ferry-dav-remembered-other")
        let memory = HeldMemory()
        let url = proxy.url("/dav/other/")
        let key = try WebDAVBackend(baseURL: url, settings: CurlTransportSettings()).rememberedFeaturesKey
        // What a server that wrote in place would have left: nothing atomic, and a recent probe.
        var stale = Self.features
        stale.atomicPut = .unsupported("the cut-off PUT left part of a file")
        memory.remember(key, try #require(RememberedServerFeatures(server: "SabreDAV/4.6", probedAt: Date().timeIntervalSince1970,
                                                                    features: stale).encoded()))

        let backend = try WebDAVBackend(baseURL: url, settings: CurlTransportSettings(), memory: memory)
        _ = try await backend.upload(try upload(scratch, seed: 3, to: "IMG_3.jpg"), observer: NullTransferObserver())
        #expect(probeRequests(proxy.requests).count > 0)
        #expect(backend.serverFeatureRecord.current?.atomicPut == .supported)
        #expect(memory.onlyRecord?.server.contains("nginx") == true)
        #expect(memory.onlyRecord?.features.atomicPut == .supported)
    }

    @Test("a probe the folder refused (403 on the probe file) is used for the run but not remembered", .integration)
    func refusedProbeIsNotRemembered() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--path-script", #"^PUT .*/\.ferry-probe\.ferry-part=403"#])
        let memory = HeldMemory()
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/refused/"), settings: CurlTransportSettings(), memory: memory)
        let capabilities = try await backend.discoverCapabilities()
        #expect(!capabilities.resumableUpload)
        #expect(backend.serverFeatureRecord.current?.atomicPut == .unsupported("HTTP 403 on PUT (the probe file)"))
        #expect(memory.values.withLock { $0.isEmpty })
    }
}

private func probeRequests(_ lines: [String]) -> [String] {
    lines.filter { $0.contains(".ferry-probe") }
}

private func upload(_ scratch: TemporaryDirectory, seed: UInt64, to destination: String) throws -> UploadRequest {
    let local = scratch.child("source-\(seed)")
    try TreeGenerator.write(at: local, size: 4096, seed: seed, modified: 1_650_000_000.25)
    let meta = try #require(try LocalFileSystem.metadata(local))
    return UploadRequest(source: local, destination: try RelativePath(destination), size: meta.size,
                         modifiedNanos: meta.modifiedNanos, mayResume: false)
}
