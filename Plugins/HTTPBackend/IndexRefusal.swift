import FerryPluginAPI

/// The error for a folder index that is refused as a whole: hostile, broken or too big.
/// Never retried (the server would send the same again), and it names the folder.
enum IndexRefusal {
    static func error(_ detail: String, directory: RelativePath) -> BackendError {
        BackendError(.protocolViolation, "refusing the folder index: " + detail, path: directory.description)
    }
}
