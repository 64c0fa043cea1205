import FerryConfig
import FerryCore
import FerryEngine
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging

/// Keeps a pull or sync folder up to date: every `poll_interval` it lists the remote
/// folder's top level and its `.ferry-catalog/` folder (two requests) and compares them
/// with the last poll's: the entries' ETags, sizes and times, and the other devices' change
/// markers (`ChangeMarker`), whose names change with every run that wrote anywhere in the
/// tree. Only a difference starts a run, which lists only the folders the markers name.
/// Servers propagate a change deep in the tree to the top level's ETags and times
/// unevenly, and writers that are not Ferry mark nothing, so the periodic rescan
/// (`rescan_interval`) runs regardless.
public struct RemotePoller: Sendable {
    public let runner: PairRunner
    private let settings: WatchSettings
    private let logger: Logger

    /// False when a folder watcher of the same pair (a two-way sync) already asks for the
    /// run at start and the periodic rescans: the poller then only reports remote changes.
    private let asksForFullRuns: Bool

    public init(runner: PairRunner, settings: WatchSettings, logger: Logger, asksForFullRuns: Bool = true) {
        self.asksForFullRuns = asksForFullRuns
        self.runner = runner
        self.settings = settings
        self.logger = logger
    }

    /// What one listing of the top level says about the remote's state.
    static func fingerprint(_ entries: [RemoteEntry]) -> [String] {
        entries.map { "\($0.path.string)|\($0.kind.rawValue)|\($0.size)|\($0.modifiedNanos ?? -1)|\($0.etag ?? "")" }.sorted()
    }

    /// The top level's entries and the change markers, as one fingerprint.
    static func look(at pair: FolderPair) async throws(BackendError) -> [String] {
        let top = Self.fingerprint(try await pair.backend.list(pair.remoteRoot))
        let markers: [String]
        do {
            markers = try await pair.backend.list(RemoteCatalog.folder(in: pair.remoteRoot))
                .filter { ChangeMarker.parse(fileName: $0.path.name) != nil }.map(\.path.name).sorted()
        } catch where error.code == .notFound {
            markers = []
        }
        return top + markers
    }

    public func run() async {
        let pair = runner.pair
        var last = try? await Self.look(at: pair)
        let clock = runner.clock
        var lastFull = clock.now()
        if asksForFullRuns { await runner.request(RunRequest(reason: "start")) }
        logger.info("polling", metadata: ["folder": "\(pair.name)", "every": "\(settings.pollInterval)"])
        while !Task.isCancelled {
            await clock.sleep(for: settings.pollInterval)
            if Task.isCancelled { break }
            if asksForFullRuns, clock.now() - lastFull >= settings.rescanInterval.inSeconds {
                lastFull = clock.now()
                await runner.request(RunRequest(reason: "periodic rescan"))
                continue
            }
            do {
                let current = try await Self.look(at: pair)
                if let last, last == current {
                    logger.debug("remote unchanged", metadata: ["folder": "\(pair.name)"])
                    continue
                }
                last = current
                await runner.request(RunRequest(reason: "poll"))
            } catch {
                // An unreachable remote is the run's business (it parks and probes); here
                // it only means "look again next time".
                logger.info("poll failed", metadata: ["folder": "\(pair.name)", "error": "\(error.description)"])
            }
        }
    }
}
