import FerryPluginAPI
import Synchronization

/// Whether this server renames with `MOVE`: as configured, or (`rename: auto`) found out
/// once by a probe that the first upload runs while the others wait for its answer. A
/// probe that fails (the server is down) is not remembered; the next upload probes again.
final class RenameSupport: Sendable {
    private enum State {
        case known(Bool)
        case probing(Task<Result<Bool, BackendError>, Never>)
        case unknown
    }

    private let state: Mutex<State>

    init(_ rename: HTTPRemoteOptions.Rename) {
        switch rename {
        case .move: state = Mutex(.known(true))
        case .none: state = Mutex(.known(false))
        case .auto: state = Mutex(.unknown)
        }
    }

    /// The answer, or nil while it is not known yet.
    var known: Bool? {
        state.withLock { state in
            if case let .known(value) = state { return value }
            return nil
        }
    }

    /// The answer, probing with `probe` if nobody has yet.
    func resolve(probe: @escaping @Sendable () async -> Result<Bool, BackendError>) async throws(BackendError) -> Bool {
        let probing: Task<Result<Bool, BackendError>, Never>? = state.withLock { state in
            switch state {
            case .known:
                return nil
            case let .probing(task):
                return task
            case .unknown:
                let task = Task { await probe() }
                state = .probing(task)
                return task
            }
        }
        guard let probing else { return known ?? false }
        let result = await probing.value
        state.withLock { state in
            guard case .probing = state else { return }
            switch result {
            case let .success(value): state = .known(value)
            case .failure: state = .unknown
            }
        }
        return try result.get()
    }
}
