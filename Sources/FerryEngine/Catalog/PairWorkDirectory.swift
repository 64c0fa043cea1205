import FerrySystem

/// A folder pair's scratch folder in the state folder (`bundles/pair-N`): bundles are
/// built and restored there, and the remote catalog's files pass through it. A run clears
/// it under the pair's run lock.
package enum PairWorkDirectory {
    package static func path(in stateDirectory: String, pairId: Int64) -> String {
        LocalFileSystem.join(stateDirectory, "bundles/pair-\(pairId)")
    }
}
