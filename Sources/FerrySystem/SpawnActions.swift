internal import CFerrySystem
#if canImport(Glibc)
public import Glibc
#endif

/// What a spawned child does to its descriptors before it runs its program.
public enum SpawnActions {
    /// Closes every descriptor from 3 up in the child (after the dup2s that gave it its
    /// standard streams): a plugin inherits only its pipes, never a journal, a lock, or a
    /// file another thread has open for writing (which, held by a long-lived child, made
    /// executing that file fail with "Text file busy").
    public static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        _ = withUnsafeMutablePointer(to: &actions) { CFerrySystem_spawn_closefrom($0, 3) }
    }
}
