import FerryCore
import FerryEngine
import FerryPluginAPI

/// What `ferry ls` lists: a remote's entries below a place, from the server, or from what
/// the journal last saw of it (`--cached`, or when the server cannot be reached). Saved
/// versions are left out: `ferry versions` shows them.
struct RemoteListingQuery {
    /// A configured remote (name or name:path), a URL or a path, as typed.
    var remote: String
    var recursive = false
    /// Answer from the journal, without asking the server.
    var cached = false

    struct Answer {
        var backend: any Backend
        var root: RelativePath
        /// Sorted by path.
        var entries: [RemoteEntry]
        /// Set when the answer is the journal's: since when it holds (nil inside: unknown).
        var asOf: Double??

        /// An entry's name as shown: relative to the place listed.
        func name(of entry: RemoteEntry) -> String {
            entry.path.relative(to: root)?.string ?? entry.path.string
        }
    }

    func answer(_ context: CommandContext) async throws(CommandFailure) -> Answer {
        let selection = FolderSelection(config: context.config, registry: context.registry,
                                        currentDirectory: context.currentDirectory)
        let (backend, root): (any Backend, RelativePath)
        do {
            (backend, root) = try selection.adHocRemote(remote)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        let shown = SecretRedaction.redactingPassword(remote)
        var answer: Answer
        if cached {
            guard let recorded = try await fromJournal(backend, root, context) else {
                throw CommandFailure.usage("the journal knows nothing of \(shown): no folder syncs with it; list it without --cached")
            }
            answer = Answer(backend: backend, root: root, entries: recorded.entries, asOf: .some(recorded.asOf))
        } else {
            do {
                let entries = recursive ? try await backend.listTree(root, bounds: context.config.listingBounds) : try await backend.list(root)
                answer = Answer(backend: backend, root: root, entries: entries, asOf: nil)
            } catch {
                // A server out of reach: what Ferry last saw of it, said to be that.
                guard error.suggestsOutage || error.code == .unreachable,
                      let recorded = try await fromJournal(backend, root, context) else {
                    throw CommandFailure.runtime("cannot list \(shown): \(error.description)")
                }
                StandardStreams.error("ferry: \(shown) cannot be reached (\(error.message)); listing what Ferry last saw of it")
                answer = Answer(backend: backend, root: root, entries: recorded.entries, asOf: .some(recorded.asOf))
            }
        }
        // A listing of the versions folder itself (nas:photos/.ferry-versions) shows them.
        answer.entries.removeAll { entry in
            entry.path.relative(to: root)?.components.contains(VersionName.folderName) ?? false
        }
        answer.entries.sort { $0.path < $1.path }
        return answer
    }

    /// What the journal holds of that place, or nil when no folder syncs with it.
    private func fromJournal(_ backend: any Backend, _ root: RelativePath,
                             _ context: CommandContext) async throws(CommandFailure) -> CachedListing.Answer? {
        do {
            return try await CachedListing.answer(backend: backend, root: root, recursive: recursive, state: context.state)
        } catch {
            throw CommandFailure.runtime("cannot read the journal: \(error.description)")
        }
    }
}
