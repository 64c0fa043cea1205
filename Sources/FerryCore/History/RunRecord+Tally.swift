import FerryJournal

extension RunRecord {
    /// The record of a run with the figures its tally gathered.
    public init(folder: String, mode: String, localRoot: String, remote: String, trigger: RunTrigger,
                startedAt: Double, endedAt: Double, outcome: String, error: String? = nil, tally: RunTally,
                journalBytes: Int64 = 0, trackedFiles: Int = 0) {
        self.init(folder: folder, mode: mode, localRoot: localRoot, remote: remote, trigger: trigger,
                  startedAt: startedAt, endedAt: endedAt, outcome: outcome, error: error,
                  moved: tally.moved, conflicts: tally.conflicts, retriedFailures: tally.retriedFailures,
                  permanentFailures: tally.permanentFailures, resumedBytes: tally.resumedBytes,
                  offlineSeconds: tally.offlineSeconds, peakBytesPerSecond: tally.peakBytesPerSecond,
                  journalBytes: journalBytes, trackedFiles: trackedFiles)
    }
}
