import FerryPluginAPI
import Foundation
import FerrySystem

/// An exclusive lock on one folder pair, so two Ferry processes never run it at once
/// (`FileLock`: released by the kernel when the holder dies, so a crash never leaves a
/// stale lock). The file holds the holder's pid for the message.
public final class RunLock: Sendable {
    private let lock: FileLock
    public var path: String { lock.path }

    /// The lock, waited for while another process holds it: tried again once a second on
    /// `clock` until the holder lets go, or the task is cancelled (then the last refusal is
    /// thrown). `onBusy` hears of the first refusal, to say why nothing happens yet.
    public static func acquireWaiting(stateDirectory: String, pairId: Int64, clock: any FerryClock,
                                      onBusy: (RunLockError) -> Void = { _ in }) async throws(RunLockError) -> RunLock {
        var told = false
        while true {
            do throws(RunLockError) {
                return try acquire(stateDirectory: stateDirectory, pairId: pairId)
            } catch {
                guard !Task.isCancelled else { throw error }
                if !told { onBusy(error) }
                told = true
                await clock.sleep(for: 1.0)
            }
        }
    }

    public static func acquire(stateDirectory: String, pairId: Int64) throws(RunLockError) -> RunLock {
        let folder = LocalFileSystem.join(stateDirectory, "locks")
        let path = lockPath(stateDirectory: stateDirectory, pairId: pairId)
        do {
            try LocalFileSystem.makeDirectories(folder, permissions: 0o700)
        } catch {
            throw RunLockError(message: "cannot create the lock folder: \(error.description)")
        }
        let taken: FileLock?
        do {
            taken = try FileLock.exclusive(path, waits: false)
        } catch {
            throw RunLockError(message: "cannot lock \(path): \(error.reason)")
        }
        guard let taken else {
            let holder = note(at: path) ?? "another process"
            throw RunLockError(message: "this folder pair is being synced by \(holder); wait for it to finish or stop it")
        }
        // The note is for messages only: a lock without it still excludes.
        try? taken.replaceContents(Array("ferry pid \(CurrentProcess.id) on \(ProcessInfo.processInfo.hostName)\n".utf8))
        return RunLock(lock: taken)
    }

    /// Who holds the pair's lock right now (the holder's note), or nil when nobody does:
    /// a pair in `uploading`/`downloading` that nobody holds was interrupted.
    public static func holder(stateDirectory: String, pairId: Int64) -> String? {
        let path = lockPath(stateDirectory: stateDirectory, pairId: pairId)
        guard FileLock.isHeld(path) else { return nil }
        return note(at: path) ?? "another process"
    }

    private static func lockPath(stateDirectory: String, pairId: Int64) -> String {
        LocalFileSystem.join(LocalFileSystem.join(stateDirectory, "locks"), "pair-\(pairId).lock")
    }

    private static func note(at path: String) -> String? {
        let note = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return note?.isEmpty == false ? note : nil
    }

    private init(lock: FileLock) {
        self.lock = lock
    }
}

public struct RunLockError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
