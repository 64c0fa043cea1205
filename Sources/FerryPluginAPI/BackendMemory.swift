import Foundation

/// What a backend learnt about its server and may keep between runs: a probe's findings,
/// so that every run does not ask the server again. Ferry keeps it in the state folder
/// (one file per key); a plugin picks keys that name its server, and must take anything
/// it reads back as a hint to check, never as fact: the file can be old, from another
/// version of the plugin, or damaged, and then reads as nothing.
public protocol BackendMemory: Sendable {
    /// The bytes last remembered under `key`, or nil.
    func recall(_ key: String) -> Data?
    /// Keeps `value` under `key`, replacing what was there. Best effort: a state folder
    /// that cannot be written only means the next run asks the server again.
    func remember(_ key: String, _ value: Data)
}
