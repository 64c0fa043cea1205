import FerryConfig
import FerryCore
import FerryEngine
import FerryPlanning

/// A command's check of a folder's run conditions (`when:`) before it moves anything.
enum RunConditionGate {
    /// What the folder waits for ("waiting for mains power (on battery)"), nil when it may run.
    static func waiting(_ conditions: RunConditions) async -> String? {
        await SystemConditionProbe.standard().waiting(for: conditions)
    }

    /// The summary of a run that waited: it names what for, and moved nothing.
    static func waitingSummary(folder: String, mode: SyncMode, reason: String) -> RunSummary {
        var summary = RunSummary(folder: folder, mode: mode, dryRun: false)
        summary.waitingFor = reason
        return summary
    }
}
