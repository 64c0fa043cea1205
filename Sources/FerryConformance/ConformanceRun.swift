import FerryPluginAPI
import Foundation

/// Runs every conformance check against one backend, each in a fresh empty folder of it
/// (`SubfolderBackend`) with a fresh local scratch folder, and collects what passed, what
/// failed and what did not apply.
/// The folders are removed afterwards, whatever the outcome.
public struct ConformanceRun: Sendable {
    public struct Outcome: Sendable {
        public var check: String
        /// nil when the check passed or did not apply.
        public var failure: String?
        /// Why the check did not apply to this backend; nil when it ran.
        public var skipped: String?
        public var seconds: Double
        public var passed: Bool { failure == nil && skipped == nil }
    }

    public var backend: any Backend
    /// The folder on the backend under which each check gets a folder of its own.
    public var folder: RelativePath

    public init(backend: any Backend, folder: RelativePath) {
        self.backend = backend
        self.folder = folder
    }

    /// Runs the checks in order, calling `report` after each one.
    public func run(_ checks: [BackendConformance.Check] = BackendConformance.checks,
                    report: (Outcome) -> Void = { _ in }) async -> [Outcome] {
        var outcomes: [Outcome] = []
        let clock = ContinuousClock()
        // Capabilities come from the backend itself (an external plugin's handshake), so
        // ask once before the checks read them.
        _ = try? await backend.discoverCapabilities()
        for (index, check) in checks.enumerated() {
            let started = clock.now
            var failure: String?
            var skipped: String?
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-conformance-\(UUID().uuidString)").path
            do {
                try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
                let checkFolder = folder.appending(try RelativePath("check-\(index + 1)"))
                try await backend.makeDirectory(checkFolder)
                try await check.run(SubfolderBackend(backend, folder: checkFolder), scratch)
            } catch let notApplicable as BackendConformance.NotApplicable {
                skipped = notApplicable.reason
            } catch {
                failure = "\(error)"
            }
            try? FileManager.default.removeItem(atPath: scratch)
            let outcome = Outcome(check: check.name, failure: failure, skipped: skipped, seconds: (clock.now - started).inSeconds)
            report(outcome)
            outcomes.append(outcome)
        }
        await removeTree(folder)
        return outcomes
    }

    /// Deletes a folder and everything below it, files first, deepest folders first.
    private func removeTree(_ root: RelativePath) async {
        var folders: [RelativePath] = [root]
        var index = 0
        while index < folders.count {
            let entries = (try? await backend.list(folders[index])) ?? []
            for entry in entries {
                if entry.kind == .directory { folders.append(entry.path) } else { try? await backend.delete(entry.path) }
            }
            index += 1
        }
        for folder in folders.reversed() { try? await backend.delete(folder) }
    }
}
