/// Files a watcher saw settle and files it saw go, when a run is for those alone
/// (`PairRun.planWatchedChanges`).
public struct WatchedChanges: Sendable, Equatable {
    public var settled: Set<String>
    public var removed: Set<String>

    public init(settled: Set<String>, removed: Set<String>) {
        self.settled = settled
        self.removed = removed
    }
}
