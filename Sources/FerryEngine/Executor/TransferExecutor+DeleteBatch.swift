import FerryPlanning
import FerryPluginAPI

extension TransferExecutor {
    /// Whether a job may go to the backend in a batch of deletes: a remote delete that
    /// destroys the copy. One that moves it into the remote trash is a move, one per file.
    static func joinsDeleteBatch(_ record: FileRecord) -> Bool {
        record.action == .deleteRemote && record.moveTarget == nil
    }

    /// Deletes the remote copies of `records` (each `joinsDeleteBatch`) with as few
    /// requests as the backend allows; returns each record's outcome by path. A key the
    /// backend could not delete fails alone; a failure of the whole request is every
    /// record's, under its own path.
    func deleteRemote(batch records: [FileRecord]) async -> [String: Result<Success, Failure>] {
        var outcomes: [String: Result<Success, Failure>] = [:]
        var remotePaths: [RelativePath] = []
        var recordPaths: [RelativePath: String] = [:]
        for record in records {
            do {
                let path = try remotePath(record)
                remotePaths.append(path)
                recordPaths[path] = record.path
            } catch {
                outcomes[record.path] = .failure(.backend(error as? BackendError ?? BackendError(.invalidName, "\(error)", path: record.path)))
            }
        }
        do throws(BackendError) {
            let failures = try await pair.backend.deleteFiles(remotePaths)
            for path in remotePaths {
                guard let recordPath = recordPaths[path] else { continue }
                outcomes[recordPath] = failures[path].map { .failure(.backend($0)) } ?? .success(.deleted(trashed: false))
            }
        } catch {
            for path in remotePaths {
                guard let recordPath = recordPaths[path] else { continue }
                var own = error
                own.path = path.description
                outcomes[recordPath] = .failure(.backend(own))
            }
        }
        return outcomes
    }
}
