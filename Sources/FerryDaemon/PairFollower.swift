import FerryConfig
import FerryEngine
import Logging
import ServiceLifecycle

/// What asks for a pair's runs for as long as the runtime runs: the watcher of its folder
/// (push), the poller of its remote (pull), or both (sync, where either side can change).
struct PairFollower: Service, CustomStringConvertible {
    let pair: FolderPair
    let runner: PairRunner
    let config: Config
    let board: DaemonStatusBoard
    let logger: Logger

    /// How the service group's logs name it (the default would print the whole config).
    var description: String { "follower of \(pair.mode.rawValue) \(pair.name)" }

    func run() async {
        switch pair.mode {
        case .push:
            await watch()
        case .pull:
            await RemotePoller(runner: runner, settings: config.watch, logger: logger).run()
        case .sync:
            async let polling: Void = RemotePoller(runner: runner, settings: config.watch, logger: logger,
                                                    asksForFullRuns: false).run()
            await watch()
            await polling
        }
    }

    /// A folder that cannot be watched is reported and ends only its own follower.
    private func watch() async {
        do {
            try await FolderWatcher(runner: runner, config: config, board: board, logger: logger).run()
        } catch {
            logger.error("cannot watch", metadata: ["folder": "\(pair.name)", "error": "\(error)"])
        }
    }
}
