import FerryConfig
import FerryCore
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// What the control API serves and steers, handed to it by the running `DaemonRuntime`:
/// the live status, the folders' runners, the journal and the run history.
public final class DaemonControl: Sendable {
    public let config: Config
    public let state: StateFolder
    public let board: DaemonStatusBoard
    public let events: DaemonEventLog
    private let runners: DaemonRuntime.Runners
    private let selection: FolderSelection
    private let pauses: DaemonPauses
    /// The daemon's clock: what the API stamps and compares with is its wall time.
    public let clock: any FerryClock

    init(config: Config, state: StateFolder, board: DaemonStatusBoard, events: DaemonEventLog,
         runners: DaemonRuntime.Runners, selection: FolderSelection, pauses: DaemonPauses, clock: any FerryClock) {
        self.config = config
        self.clock = clock
        self.state = state
        self.board = board
        self.events = events
        self.runners = runners
        self.selection = selection
        self.pauses = pauses
    }

    public func snapshot() async -> DaemonSnapshot {
        await board.snapshot()
    }

    /// The configured folder `name`, or a `ControlError.notFound`.
    public func folder(_ name: String) throws -> FolderConfig {
        guard let folder = config.folder(named: name) else {
            throw ControlError(.notFound, "no folder named '\(name)' (folders: \(config.folders.map(\.name).joined(separator: ", ")))")
        }
        return folder
    }

    /// Asks for a run of `name` now, in `mode` (default: the folder's own).
    public func run(_ name: String, mode: SyncMode? = nil, reason: String = "api: run", acceptsChanges: Bool = false) async throws {
        for runner in try await runnersOf(name, mode: mode ?? folder(name).mode) {
            await runner.request(RunRequest(reason: reason, acceptsChanges: acceptsChanges))
        }
    }

    /// A person accepts what a held run would change (`ChangeHold`): the folder runs once
    /// without the holds. Refused when the folder is not held, so a stray call cannot wave
    /// through a hold that has not happened yet.
    public func acceptChanges(_ name: String) async throws {
        let folder = try folder(name)
        guard board.isHeld(pair: folder.name) else {
            throw ControlError(.conflict, "folder '\(name)' is not held; there is nothing to accept")
        }
        try await run(name, reason: "api: accept changes", acceptsChanges: true)
    }

    /// Pauses one folder, or every folder (nil); also the runners made later (schedules).
    public func pause(_ name: String?) async throws {
        let names = try names(name)
        pauses.pause(names, everything: name == nil, at: clock.wallTime())
        for runner in await runners.all() where names.contains(runner.pair.name) { await runner.pause() }
    }

    public func resume(_ name: String?) async throws {
        let names = try names(name)
        pauses.resume(names)
        for runner in await runners.all() where names.contains(runner.pair.name) { await runner.resume() }
    }

    public func isPaused(_ name: String) -> Bool {
        pauses.isPaused(name)
    }

    /// Why and since when `name` is paused; nil when it is not.
    public func pause(of name: String) -> DaemonPauses.Pause? {
        pauses.pause(of: name)
    }

    /// Failed files (all, or `paths`) become pending again, and the folder runs.
    public func retry(_ name: String, paths: [String]?) async throws -> [String] {
        let (service, pair) = try await recordedPair(folder(name))
        do {
            let reset = try await service.retry(in: pair, paths: paths)
            if !reset.isEmpty { try await run(name, reason: "api: retry") }
            return reset
        } catch let error as JournalError {
            throw ControlError(.unavailable, error.description)
        }
    }

    /// Answers the conflicts at `path` (a file, or every one below a folder; "" for all) and
    /// syncs the folder, which carries the answer out.
    public func resolve(_ name: String, path: String, keep: ConflictPolicy) async throws -> [String] {
        let (service, pair) = try await recordedPair(folder(name))
        do {
            let resolved = try await service.resolve(in: pair, path: path, keep: keep)
            if !resolved.isEmpty { try await run(name, mode: .sync, reason: "api: resolve") }
            return resolved
        } catch let error as JournalError {
            throw ControlError(.unavailable, error.description)
        }
    }

    /// What the API asks of a configured folder's pair goes through the service the
    /// commands use (`FolderService`); `ControlError.notFound` when the folder never ran.
    public func recordedPair(_ folder: FolderConfig) async throws -> (service: FolderService, pair: FolderPairRecord) {
        do {
            guard let service = try await FolderService.read(state, clock: clock),
                  let pair = service.recorded.pair(of: folder), pair.id != nil else {
                throw ControlError(.notFound, "folder '\(folder.name)' has not run yet; nothing in the journal")
            }
            return (service, pair)
        } catch let error as JournalError {
            throw ControlError(.unavailable, error.description)
        } catch let error as ControlError {
            throw error
        } catch {
            throw ControlError(.unavailable, "\(error)")
        }
    }

    private func runnersOf(_ name: String, mode: SyncMode) async throws -> [PairRunner] {
        _ = try folder(name)
        let pairs: [FolderPair]
        do {
            pairs = try selection.resolve(folder: name, remote: nil, mode: mode)
        } catch {
            throw ControlError(.invalid, error.message)
        }
        var found: [PairRunner] = []
        for pair in pairs { found.append(await runners.runner(for: pair)) }
        return found
    }

    private func names(_ name: String?) throws -> Set<String> {
        guard let name else { return Set(config.folders.map(\.name)) }
        return [try folder(name).name]
    }
}

/// Which folders are paused, since when and how: kept by the process, so a reload
/// (SIGHUP) keeps them paused.
public final class DaemonPauses: Sendable {
    public struct Pause: Sendable, Equatable {
        /// Seconds since 1970.
        public var since: Double
        /// Paused with every folder (`POST /v1/pause`), not on its own.
        public var everything: Bool

        /// What the status says: "paused through the control API (every folder)".
        public var reason: String {
            everything ? "paused through the control API, with every folder" : "paused through the control API"
        }
    }

    private let folders = Mutex([String: Pause]())

    public init() {}

    /// A folder paused already keeps its first time.
    func pause(_ names: Set<String>, everything: Bool, at time: Double) {
        folders.withLock { folders in
            for name in names where folders[name] == nil { folders[name] = Pause(since: time, everything: everything) }
        }
    }

    func resume(_ names: Set<String>) { folders.withLock { for name in names { $0[name] = nil } } }
    public func isPaused(_ name: String) -> Bool { folders.withLock { $0[name] != nil } }
    public func pause(of name: String) -> Pause? { folders.withLock { $0[name] } }
}

/// What the control API asks of the daemon when it cannot be done.
public struct ControlError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// No such folder, file or pair.
        case notFound
        /// The request asks for something that makes no sense (a pull of a push-only remote).
        case invalid
        /// The journal could not be read or written.
        case unavailable
        /// The request does not fit the folder's state (accepting a hold that is not there).
        case conflict
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The control API's process-wide parts, handed to every runtime the process starts: the
/// event log and pauses (they outlive a reload), and the slot through which the API, which
/// runs beside the runtimes for the whole process, reaches the one that runs now.
public struct ControlService: Sendable {
    public var events: DaemonEventLog
    public var pauses: DaemonPauses
    public var slot: DaemonControlSlot
    /// The process's one live clock, which every runtime and the API use.
    public let clock: any FerryClock

    public init(events: DaemonEventLog, pauses: DaemonPauses, slot: DaemonControlSlot, clock: any FerryClock) {
        self.clock = clock
        self.events = events
        self.pauses = pauses
        self.slot = slot
    }
}
