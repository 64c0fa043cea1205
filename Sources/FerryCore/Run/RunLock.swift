import FerryPluginAPI
import Foundation
#if canImport(Glibc)
import Glibc
import FerrySystem
#endif

/// An exclusive lock on one folder pair, so two Ferry processes never run it at once.
/// `flock` is released by the kernel when the holder dies, even by kill -9, so a crash
/// never leaves a stale lock behind. The file holds the holder's pid for the message.
public final class RunLock: Sendable {
    private let descriptor: Int32
    public let path: String

    public static func acquire(stateDirectory: String, pairId: Int64) throws(RunLockError) -> RunLock {
        let folder = LocalFileSystem.join(stateDirectory, "locks")
        let path = LocalFileSystem.join(folder, "pair-\(pairId).lock")
        do {
            try LocalFileSystem.makeDirectories(folder, permissions: 0o700)
        } catch {
            throw RunLockError(message: "cannot create the lock folder: \(error.description)")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw RunLockError(message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "another process"
            close(fd)
            throw RunLockError(message: "this folder pair is being synced by \(holder.isEmpty ? "another process" : holder); wait for it to finish or stop it")
        }
        let note = Array("ferry pid \(getpid()) on \(ProcessInfo.processInfo.hostName)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return RunLock(descriptor: fd, path: path)
    }

    /// Who holds the pair's lock right now (the holder's note), or nil when nobody does:
    /// a pair in `uploading`/`downloading` that nobody holds was interrupted.
    public static func holder(stateDirectory: String, pairId: Int64) -> String? {
        let path = LocalFileSystem.join(LocalFileSystem.join(stateDirectory, "locks"), "pair-\(pairId).lock")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        let note = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return note?.isEmpty == false ? note : "another process"
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

public struct RunLockError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
