import Foundation
import Testing

/// Several devices on one remote, simulated the way Dropbox tests its sync engine
/// (Trinity): two or three devices, each with its own folder, journal and device id, sync one
/// in-memory remote through a gate that lets one backend call through at a time, in an
/// order chosen from a seed, with 503s, lost answers and crashes thrown in; the people at
/// the devices edit, add, delete and rename files between syncs. Each seed then lets the
/// devices sync in turn twice and checks that they agree with each other and with the
/// remote, that no version was lost and that no deletion was undone
/// (`SeveralDevicesSimulation`, `VersionLedger`).
///
/// A seed is replayed exactly: the same seed gives the same interleaving, the same faults,
/// the same runs and the same trees. A failure prints its seed and its trace;
/// `FERRY_SIMULATION_SEED=N` runs that seed alone. `FERRY_SIMULATION_SEEDS=N` asks for more
/// seeds than the 150 of `make test` (`make soak` runs 20,000), and
/// `FERRY_SIMULATION_FIRST_SEED=N` starts them elsewhere than at 1.
@Suite("several devices: a deterministic simulation")
struct SeveralDevicesSimulationTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seedCount = environment["FERRY_SIMULATION_SEEDS"].flatMap { Int($0) } ?? 150
    /// Where the seeds start: a hunt for new cases starts past the seeds already run.
    static let firstSeed = environment["FERRY_SIMULATION_FIRST_SEED"].flatMap { UInt64($0) } ?? 1
    static let onlySeed = environment["FERRY_SIMULATION_SEED"].flatMap { UInt64($0) }
    /// Seeds run side by side. A seed runs one device at a time, which waits now and then
    /// for the journal's and the disk's threads: twice as many seeds as cores keep them busy.
    static let width = max(2, ProcessInfo.processInfo.activeProcessorCount * 2)
    /// Tmpfs where there is one: the devices' journals sync to disk after each commit.
    static let base: String? = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : nil

    /// The seeds' problems, the first few in full (with their traces), the rest by seed;
    /// then the known issues seen, each once, as known issues.
    static func report(_ outcomes: [SeveralDevicesSimulation.Outcome], sourceLocation: SourceLocation = #_sourceLocation) {
        for issue in SeveralDevicesSimulation.KnownIssue.allCases {
            let hits = outcomes.filter { outcome in outcome.known.contains { $0.issue == issue } }
            guard let first = hits.first, let problem = first.known.first(where: { $0.issue == issue })?.problem else { continue }
            withKnownIssue("Ferry: \(issue.rawValue)", isIntermittent: true) {
                Issue.record(Comment(rawValue: "\(hits.count) of \(outcomes.count) seeds, the first: seed \(first.seed): \(problem)"),
                             sourceLocation: sourceLocation)
            }
        }
        let failed = outcomes.filter { !$0.problems.isEmpty }
        guard !failed.isEmpty else { return }
        for outcome in failed.prefix(3) {
            Issue.record(Comment(rawValue: outcome.report), sourceLocation: sourceLocation)
        }
        if failed.count > 3 {
            let others = failed.dropFirst(3).prefix(40).map { "\($0.seed) (\($0.problems.first ?? ""))" }
            Issue.record(Comment(rawValue: "\(failed.count) of \(outcomes.count) seeds failed; the others: " + others.joined(separator: ", ")),
                         sourceLocation: sourceLocation)
        }
    }

    @Test("random interleavings of several devices' calls, faults and crashes: no version lost, no deletion undone, one tree everywhere")
    func simulatedSeeds() async {
        let seeds = Self.onlySeed.map { [$0] } ?? (0..<UInt64(max(1, Self.seedCount))).map { Self.firstSeed + $0 }
        let outcomes = await SeveralDevicesSimulation.outcomes(of: seeds, width: Self.width, in: Self.base)
        if let only = Self.onlySeed, let outcome = outcomes.first {
            // Asked for by hand: the whole trace, passed or not.
            print("seed \(only):\n" + outcome.trace.joined(separator: "\n") + "\n" + outcome.trees)
        }
        Self.report(outcomes)
    }

    /// What "deterministic" means here: the interleaving is the seed's, not the thread
    /// pool's.
    @Test("the same seed twice: the same calls in the same order, the same faults, the same trees",
          arguments: [1, 2, 3, 5, 8, 13, 21, 34] as [UInt64])
    func sameSeedSameRun(_ seed: UInt64) async {
        let first = await SeveralDevicesSimulation(seed: seed).run(in: Self.base)
        let second = await SeveralDevicesSimulation(seed: seed).run(in: Self.base)
        #expect(first.trace.count > 20, "seed \(seed) did next to nothing:\n\(first.trace.joined(separator: "\n"))")
        let common = min(first.trace.count, second.trace.count)
        let parting = (0..<common).first { first.trace[$0] != second.trace[$0] }
            ?? (first.trace.count == second.trace.count ? nil : common)
        if let index = parting {
            let context = max(0, index - 10)
            Issue.record("""
                seed \(seed): the traces part at line \(index + 1):
                first:  \(first.trace[context..<min(first.trace.count, index + 3)].joined(separator: "\n        "))
                second: \(second.trace[context..<min(second.trace.count, index + 3)].joined(separator: "\n        "))
                """)
        }
        #expect(first.trees == second.trees, "seed \(seed)")
        #expect(first.problems == second.problems, "seed \(seed)")
        #expect(first.known.map(\.problem) == second.known.map(\.problem), "seed \(seed)")
    }
}
