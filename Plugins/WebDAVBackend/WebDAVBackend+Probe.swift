import CurlTransport
import FerryPluginAPI
import FerrySystem
import Foundation

/// Finding out what a server really does, once per backend, before relying on it.
///
/// A status code alone proves nothing: nginx refuses a ranged `PUT` with 501, but a server
/// that ignored `Content-Range` and answered 204 would replace the file with the second
/// part. So the probe writes a small file, lists its folder to see whether the file (whose
/// name starts with `.`) is shown, appends to it with a ranged `PUT`, reads it back and
/// compares every byte, and sets Ferry's `mtime` property and reads it back; on a second
/// file it writes a version whole, cuts a second `PUT` off half-way and reads back what the
/// name holds; on a third it tries `If-None-Match: *`; then it removes the three files.
/// About a dozen requests, once per remote URL and day (the findings are remembered in the
/// state folder: `RememberedServerFeatures`). The three files are probed at the same
/// time, each on its own connection: one after the other, with 10 ms per round trip, the
/// probe held every upload back for 0.16 s (0.21 s on Apache), as long as 60 small files
/// take. The files go into the folder of the upload that needs the answer (a folder that
/// upload must be able to write anyway; Apache answers 500 to a file created in a folder it
/// may not write), or the root.
extension WebDAVBackend {
    /// The probe file's two parts: different, so an append, an overwrite and an ignored
    /// range all read back differently.
    static let probeFirstPart = Data("ferry probe, part one: 0123456\n".utf8)
    static let probeSecondPart = Data("ferry probe, part two: 7890123\n".utf8)
    /// A time with nanoseconds, to see how precisely the property keeps it.
    static let probeModificationTime: Int64 = 1_650_000_000_123_456_789
    /// The atomic-PUT probe's two versions of the file: the one written whole, and the one
    /// whose `PUT` is cut off half-way. Different bytes, so a partial write of the second
    /// reads back as neither; 16 KiB, so the half that goes out is more than a server that
    /// writes in place has to buffer before its first write.
    static let probeWholeVersion = Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 % 251) })
    static let probeCutVersion = Data(repeating: UInt8(ascii: "x"), count: 16_384)
    /// Between the cut and the read-back: a server that writes in place on another thread
    /// may not have touched the file yet when a read on a new connection arrives, and would
    /// pass for atomic. The probe runs once per remote URL and day.
    static let probeCutPause: Duration = .milliseconds(50)

    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        _ = try await serverFeatures()
        return capabilities
    }

    /// The server's features: remembered from an earlier run while they stand
    /// (`RememberedServerFeatures`), else probed on first use (in `folder`, which must
    /// exist, on the probe file of `tag`) and remembered; free afterwards, for a day from
    /// the probe (a daemon probes again after that).
    public func serverFeatures(probingIn folder: RelativePath = .root, tag: String? = nil) async throws(BackendError) -> WebDAVServerFeatures {
        try await serverFeatureRecord.features { [self] in
            if let remembered = await rememberedFeatures() {
                return .success(ServerFeatureRecord.Found(features: remembered.features, until: remembered.until))
            }
            do throws(BackendError) {
                let found = try await probe(in: folder, tag: tag)
                let probedAt = SystemClock().wallTime()
                if found.conclusive { remember(found.features, probedAt: probedAt) }
                return .success(ServerFeatureRecord.Found(features: found.features,
                                                          until: probedAt + RememberedServerFeatures.standsFor))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The key of this server's findings in the backend memory: per URL, since two
    /// folders of one host can be two servers behind a proxy.
    var rememberedFeaturesKey: String { "webdav-server-features " + urls.origin + urls.rootPath }

    private func rememberedFeatures() async -> RememberedServerFeatures? {
        guard let memory, let data = memory.recall(rememberedFeaturesKey) else { return nil }
        // A run's listing has heard the server's name by now; anything else asks once,
        // which is still one request against the probe's dozen.
        if transport.serverSoftware == nil { _ = try? await propfindRoot() }
        return RememberedServerFeatures.trusted(data, server: transport.serverSoftware, now: SystemClock().wallTime())
    }

    private func remember(_ features: WebDAVServerFeatures, probedAt: Double) {
        guard let memory, let server = transport.serverSoftware else { return }
        let record = RememberedServerFeatures(server: server, probedAt: probedAt, features: features)
        if let data = record.encoded() { memory.remember(rememberedFeaturesKey, data) }
    }

    /// The probe files' names: temporary names, which listings and scans skip. Always the
    /// same, so that a probe file a dropped connection left behind is replaced and removed
    /// by the next probe rather than piling up (nginx does not even list it). Two probes
    /// at once in one folder write over each other's files; the worst one can do to the
    /// other is make it read back wrong: "unsupported", the safe answer for the data, but
    /// for the whole run (on Apache a run that takes the mtime property for unsupported
    /// keeps no modification times). `probeName` is the first file's.
    static let probeName = probeName(.basics, tag: nil)

    /// The three probe files, probed at the same time: each one's requests must not meet
    /// another's on the same name (the cut-off `PUT` leaves its file in a state only its
    /// own read-back may look at).
    enum ProbeFile: String, CaseIterable, Sendable {
        /// Written first with `X-OC-Mtime`; listed, appended to with a ranged `PUT`, given
        /// the `mtime` property.
        case basics = ""
        /// Written whole, then a `PUT` of another version cut off half-way.
        case atomicPut = "-atomic"
        /// Written whole, then a `PUT` with `If-None-Match: *` onto it.
        case newNameCondition = "-condition"
    }

    /// One probe file's name (`.ferry-probe.ferry-part`, `.ferry-probe-atomic.ferry-part`,
    /// …), for the device `tag` (`UploadRequest.temporaryTag`) with the tag in it
    /// (`.ferry-probe-atomic.TAG.ferry-part`): devices that write one folder at the same
    /// moment, and so run their probes at the same moment, each probe files of their own.
    /// Sharing one, a device's probe could write its whole-version PUT between the other's
    /// PROPPATCH and its read back (SeveralDevicesTests, append-only on Apache, failed that
    /// way with extra conflict copies).
    static func probeName(_ file: ProbeFile, tag: String?) -> String {
        let stem = ".ferry-probe" + file.rawValue
        guard let tag, !tag.isEmpty else { return stem + TemporaryName.suffix }
        return stem + "." + tag + TemporaryName.suffix
    }

    /// Runs the probe now (uncached) on the probe files of `tag` in `folder` (created if
    /// missing), removed afterwards. Errors that would stop any upload there (credentials
    /// refused, server unreachable or failing) are thrown; a feature the server refuses is
    /// reported as unsupported.
    public func probeServer(in folder: RelativePath = .root, tag: String? = nil) async throws(BackendError) -> WebDAVServerFeatures {
        try await probe(in: folder, tag: tag).features
    }

    /// `probeServer`, and whether the answer is the server's (`conclusive`) rather than
    /// the folder's: a folder that refused the probe file taught nothing about the server,
    /// and that is not remembered for other runs.
    private func probe(in folder: RelativePath, tag: String?) async throws(BackendError) -> (features: WebDAVServerFeatures, conclusive: Bool) {
        try await makeDirectory(folder)
        let basicsFile = try folder.appending(Self.probeName(.basics, tag: tag))
        let atomicFile = try folder.appending(Self.probeName(.atomicPut, tag: tag))
        let conditionFile = try folder.appending(Self.probeName(.newNameCondition, tag: tag))
        // Each file on its own connection (the transport checks out a handle per request
        // in flight); their answers are combined once all three are in.
        async let basics = Self.outcome { [self] () async throws(BackendError) in try await probeBasics(on: basicsFile) }
        async let atomicPut = Self.outcome { [self] () async throws(BackendError) in
            try await probeAtomicPut(url: urls.url(atomicFile, isFolder: false), path: atomicFile)
        }
        async let newNameCondition = Self.outcome { [self] () async throws(BackendError) in
            try await probeNewNameCondition(url: urls.url(conditionFile, isFolder: false), path: conditionFile)
        }
        let outcomes = await (basics, atomicPut, newNameCondition)
        async let basicsRemoved: Void = removeProbe(basicsFile)
        async let atomicRemoved: Void = removeProbe(atomicFile)
        async let conditionRemoved: Void = removeProbe(conditionFile)
        _ = await (basicsRemoved, atomicRemoved, conditionRemoved)

        let found = try outcomes.0.get()
        // A folder that refused the first file: nothing could be learnt from the others either.
        if let refused = found.refusal { return (refused, false) }
        let atomic = try outcomes.1.get()
        let condition = try outcomes.2.get()
        let features = WebDAVServerFeatures(rangedPut: found.rangedPut, modificationTimeProperty: found.modificationTimeProperty,
                                            honoursOCMtime: found.honoursOCMtime, hidesDotNames: found.hidesDotNames,
                                            atomicPut: atomic,
                                            // Only a server whose PUT is atomic sends anything straight to a final name.
                                            newNameCondition: atomic.isSupported ? condition : .unsupported("PUT is not atomic"))
        return (features, true)
    }

    /// `body`'s result or error, as a value: for the probes run side by side with `async let`.
    private static func outcome<Value: Sendable>(
        _ body: () async throws(BackendError) -> Value
    ) async -> Result<Value, BackendError> {
        do throws(BackendError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// What the first probe file teaches.
    private struct BasicFindings: Sendable {
        /// The features to take as they are when the folder refused the file (a
        /// read-only share): nothing else can be learnt there.
        var refusal: WebDAVServerFeatures?
        var honoursOCMtime = false
        var hidesDotNames = false
        var rangedPut: WebDAVServerFeatures.Support = .unsupported("not probed")
        var modificationTimeProperty: WebDAVServerFeatures.Support = .unsupported("not probed")
    }

    /// Writes the first probe file with `X-OC-Mtime`, lists its folder, then probes ranged
    /// `PUT` and the `mtime` property on it.
    private func probeBasics(on probe: RelativePath) async throws(BackendError) -> BasicFindings {
        let url = urls.url(probe, isFolder: false)
        let created = try await transport.perform(HTTPRequest(
            method: "PUT", url: url, headers: [Self.ocMtimeHeader(Self.probeModificationTime)],
            body: .data(Self.probeFirstPart), responseBody: .memory(limit: 64 * 1024)))
        guard created.isSuccess else {
            // A folder that refuses this one name only means nothing can be learnt:
            // upload as every server allows.
            let reason = try refusal(created, method: "PUT", path: probe) + " (the probe file)"
            // Nothing could be written (a read-only share): nginx is known by its name.
            let nginx = created.header("server")?.lowercased().hasPrefix("nginx") ?? false
            return BasicFindings(refusal: WebDAVServerFeatures(
                rangedPut: .unsupported(reason), modificationTimeProperty: .unsupported(reason),
                honoursOCMtime: false, hidesDotNames: nginx, atomicPut: .unsupported(reason)))
        }
        var found = BasicFindings()
        found.honoursOCMtime = created.header("x-oc-mtime")?.lowercased() == "accepted"
        // The probe file's name starts with "." and it is stored: a listing without it
        // leaves such names out.
        found.hidesDotNames = !(try await listIncludingTemporary(probe.parent ?? .root).contains { $0.path.name == probe.name })
        found.rangedPut = try await probeRangedPut(url: url, path: probe)
        found.modificationTimeProperty = try await probeModificationTimeProperty(on: probe)
        return found
    }

    /// Writes the probe file whole, sends a `PUT` of another version that announces its
    /// full length but is cut off after half of it (as a dropped connection cuts an
    /// upload), and reads the file back: atomic when it is still the whole first version.
    /// Measured rather than guessed from the `Server` header: the same server software
    /// can be built or configured to write in place.
    private func probeAtomicPut(url: String, path: RelativePath) async throws(BackendError) -> WebDAVServerFeatures.Support {
        let whole = try await transport.perform(HTTPRequest(
            method: "PUT", url: url, body: .data(Self.probeWholeVersion), responseBody: .memory(limit: 64 * 1024)))
        guard whole.isSuccess else { return .unsupported(try refusal(whole, method: "PUT", path: path)) }
        let announced = Int64(Self.probeCutVersion.count)
        let sent = Self.probeCutVersion.prefix(Self.probeCutVersion.count / 2)
        do {
            let answer = try await transport.perform(HTTPRequest(
                method: "PUT", url: url, body: .cutOff(Data(sent), announcedLength: announced),
                responseBody: .memory(limit: 64 * 1024)))
            // Answered before the body was cut: refused unread, so nothing was learnt.
            guard answer.isSuccess else { return .unsupported(try refusal(answer, method: "PUT", path: path) + " before its body ended") }
            return .unsupported("HTTP \(answer.status) on a PUT cut off after \(sent.count) of \(announced) bytes")
        } catch where error.code == .connectionLost {
            // The cut (or the server closing the connection on it): what the name holds now is the answer.
        }
        // Backends are given no clock (the plugin API has none to give): the live one.
        await SystemClock().sleep(for: Self.probeCutPause)
        let readBack = try await transport.perform(HTTPRequest(method: "GET", url: url, responseBody: .memory(limit: 64 * 1024)))
        let cut = "a PUT cut off after \(sent.count) of \(announced) bytes"
        switch readBack.status {
        case 200 where readBack.body == Self.probeWholeVersion:
            return .supported
        case 200:
            return .unsupported("\(cut) left \(readBack.body.count) other bytes under the name")
        case 404:
            return .unsupported("\(cut) left nothing under the name")
        default:
            return .unsupported(try refusal(readBack, method: "GET", path: path) + " reading the probe file back")
        }
    }

    /// Writes the probe file whole, then sends a `PUT` with `If-None-Match: *` onto it:
    /// honoured when refused with 412 and the file is still the version it held. Any other
    /// refusal teaches nothing, and the condition is not relied on.
    private func probeNewNameCondition(url: String, path: RelativePath) async throws(BackendError) -> WebDAVServerFeatures.Support {
        let whole = try await transport.perform(HTTPRequest(
            method: "PUT", url: url, body: .data(Self.probeWholeVersion), responseBody: .memory(limit: 64 * 1024)))
        guard whole.isSuccess else { return .unsupported(try refusal(whole, method: "PUT", path: path)) }
        let answer = try await transport.perform(HTTPRequest(
            method: "PUT", url: url, headers: [("If-None-Match", "*")], body: .data(Self.probeCutVersion),
            responseBody: .memory(limit: 64 * 1024)))
        guard answer.status == 412 else {
            if answer.isSuccess { return .unsupported("HTTP \(answer.status) on a PUT with If-None-Match: * onto a taken name") }
            return .unsupported(try refusal(answer, method: "PUT with If-None-Match: *", path: path))
        }
        let readBack = try await transport.perform(HTTPRequest(method: "GET", url: url, responseBody: .memory(limit: 64 * 1024)))
        guard readBack.status == 200, readBack.body == Self.probeWholeVersion else {
            return .unsupported("HTTP 412 on a PUT with If-None-Match: *, but the file changed all the same")
        }
        return .supported
    }

    /// Appends the second part with `Content-Range` and reads the whole file back.
    private func probeRangedPut(url: String, path: RelativePath) async throws(BackendError) -> WebDAVServerFeatures.Support {
        let first = Int64(Self.probeFirstPart.count)
        let total = first + Int64(Self.probeSecondPart.count)
        let appended = try await transport.perform(HTTPRequest(
            method: "PUT", url: url, headers: [("Content-Range", "bytes \(first)-\(total - 1)/\(total)")],
            body: .data(Self.probeSecondPart), responseBody: .memory(limit: 64 * 1024)))
        guard appended.isSuccess else { return .unsupported(try refusal(appended, method: "a ranged PUT", path: path)) }
        let readBack = try await transport.perform(HTTPRequest(method: "GET", url: url, responseBody: .memory(limit: 64 * 1024)))
        guard readBack.status == 200 else {
            return .unsupported(try refusal(readBack, method: "GET", path: path) + " reading the probe file back")
        }
        guard readBack.body == Self.probeFirstPart + Self.probeSecondPart else {
            return .unsupported("HTTP \(appended.status) on a ranged PUT, but the file read back "
                                + "(\(readBack.body.count) bytes) is not the two parts in order")
        }
        return .supported
    }

    /// Sets Ferry's `mtime` property on the probe file and checks that a listing returns it.
    private func probeModificationTimeProperty(on probe: RelativePath) async throws(BackendError) -> WebDAVServerFeatures.Support {
        guard let entry = try await stat(probe) else { return .unsupported("the probe file vanished") }
        guard let stamp = ModificationTimeProperty.versionStamp(size: entry.size, lastModifiedNanos: entry.modifiedNanos,
                                                                etag: entry.etag) else {
            return .unsupported("the server lists neither an ETag nor a modification time")
        }
        let set = try await setModificationTimeProperty(probe, nanos: Self.probeModificationTime, versionStamp: stamp)
        guard set.isSupported else { return set }
        guard let after = try await stat(probe), after.modifiedNanos == Self.probeModificationTime else {
            return .unsupported("PROPPATCH succeeded, but PROPFIND does not return the time")
        }
        return .supported
    }

    /// `HTTP 501 on a ranged PUT`: the reason a feature is unsupported. A refusal that
    /// says nothing about the feature is thrown instead of remembered for the run: the
    /// credentials (401), or a passing failure (5xx, 429, 408) that would make a flaky
    /// moment look like a missing feature.
    func refusal(_ response: HTTPResponse, method: String, path: RelativePath) throws(BackendError) -> String {
        let error = HTTPErrorMapping.error(status: response.status, method: method, path: path.description,
                                           retryAfter: response.header("retry-after"))
        if error.code == .authenticationFailed || error.isRetryable { throw error }
        return "HTTP \(response.status) on \(method)"
    }

    /// Removes the probe file, trying again a few times after a dropped connection or a
    /// 5xx; a file still left has a temporary name and goes with the next probe.
    private func removeProbe(_ probe: RelativePath) async {
        // Left for the next probe to write over where the folder may not delete.
        guard HousekeepingDeletions.allowed else { return }
        for attempt in 0..<5 {
            if attempt > 0 { try? await Task.sleep(for: .milliseconds(20 << attempt)) }
            do {
                let response = try await transport.perform(HTTPRequest(
                    method: "DELETE", url: urls.url(probe, isFolder: false), responseBody: .discard))
                if response.status < 500 { return }
            } catch where error.isRetryable {
                continue
            } catch {
                return
            }
        }
    }
}
