import FerryCore
import FerryJournal
import FerryPlanning
import FerrySystem

/// What `ferry status` reports of each folder pair: counts per status and queue, the files
/// in trouble when asked, the cache, the run conditions waited for, media items when asked.
/// Read from the journal only; a folder that never ran but waits for its conditions is
/// reported too.
struct StatusQuery {
    /// A configured name or a local path; nil: every folder.
    var folder: String?
    var listsErrors = false
    var listsConflicts = false
    var groupsItems = false

    /// Whether there is a journal at all, and one report per folder pair that matches.
    func reports(_ context: CommandContext) async throws(CommandFailure) -> (hasJournal: Bool, reports: [FolderReport]) {
        let recorded: RecordedFolders?
        do {
            recorded = try await RecordedFolders.read(context.state)
        } catch {
            throw CommandFailure.runtime(error.description)
        }
        let pairs = try matchingPairs(recorded, context)
        var reports: [FolderReport] = []
        if let recorded {
            let service = FolderService(recorded: recorded, clock: context.clock)
            for pair in pairs {
                guard let id = pair.id else { continue }
                do {
                    reports.append(try await report(pair, id: id, in: service, context))
                } catch {
                    throw CommandFailure.runtime(error.description)
                }
            }
        }
        // A configured folder that never ran but waits for its run conditions says so.
        for configured in context.config.folders where folder == nil || configured.name == folder {
            guard !configured.conditions.isEmpty,
                  !reports.contains(where: { $0.pair.name == configured.name && $0.pair.localRoot == configured.localPath }),
                  let waiting = await SystemConditionProbe.standard().waiting(for: configured.conditions) else { continue }
            let pair = FolderPairRecord(name: configured.name, localRoot: configured.localPath,
                                        remoteLocation: configured.remote, createdAt: 0)
            var report = FolderReport(pair: pair, counts: [], problems: [], queueOrder: context.config.queues.map(\.name),
                                      heading: Ferry.Status.heading(pair, config: context.config,
                                                                    currentDirectory: context.currentDirectory))
            report.waitingFor = waiting
            reports.append(report)
        }
        return (recorded != nil, reports)
    }

    /// The journal's pairs that `folder` names (all of them without one).
    private func matchingPairs(_ recorded: RecordedFolders?, _ context: CommandContext) throws(CommandFailure) -> [FolderPairRecord] {
        guard let folder else { return recorded?.pairs ?? [] }
        let pairs = recorded?.pairs(named: folder, config: context.config, currentDirectory: context.currentDirectory) ?? []
        if pairs.isEmpty && context.config.folder(named: folder) == nil,
           (try? LocalFileSystem.metadataFollowingLinks(LocalFileSystem.absolute(folder, relativeTo: context.currentDirectory))) == nil {
            throw CommandFailure.usage("no folder named '\(folder)' in the config or the journal")
        }
        return pairs
    }

    private func report(_ pair: FolderPairRecord, id: Int64, in service: FolderService,
                        _ context: CommandContext) async throws(JournalError) -> FolderReport {
        let journal = service.journal
        let counts = try await journal.statusCounts(pairId: id)
        let failed = listsErrors ? try await journal.records(pairId: id, status: .syncError) : []
        let conflicted = listsErrors || listsConflicts ? try await journal.records(pairId: id, status: .conflict) : []
        var report = FolderReport(pair: pair, counts: counts, problems: failed + conflicted,
                                  queueOrder: context.config.queues.map(\.name),
                                  heading: Ferry.Status.heading(pair, config: context.config,
                                                                currentDirectory: context.currentDirectory))
        report.listsProblems = listsErrors || listsConflicts
        if let newest = try await journal.seenChangeMarkers(pairId: id).values
            .filter({ !$0.device.isEmpty }).max(by: { $0.changedAt < $1.changedAt }) {
            report.lastRemoteChange = (newest.device, newest.changedAt)
        }
        let configured = context.config.folders.first { $0.name == pair.name && $0.localPath == pair.localRoot }
        let totals = try await journal.cacheTotals(pairId: id)
        if configured?.localLimit != nil || totals.remoteOnlyFiles > 0 {
            report.cache = FolderReport.Cache(totals: totals, limit: configured?.localLimit)
        }
        if let conditions = configured?.conditions {
            report.waitingFor = await SystemConditionProbe.standard().waiting(for: conditions)
        }
        if groupsItems {
            report.items = ItemReport(items: try await service.items(of: pair, by: context.config.items))
        }
        return report
    }
}
