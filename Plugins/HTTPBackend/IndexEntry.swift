import FerryPluginAPI

/// One member of a folder as a folder index describes it, before Ferry knows everything
/// about it: an HTML index gives names only, so `size` and `modifiedNanos` are nil there
/// and come from a `HEAD` later.
public struct IndexEntry: Sendable, Equatable {
    /// The decoded name, already checked to be a valid `RelativePath` component.
    var name: String
    var kind: RemoteEntry.Kind
    var size: Int64?
    var modifiedNanos: Int64?

    init(name: String, kind: RemoteEntry.Kind, size: Int64? = nil, modifiedNanos: Int64? = nil) {
        self.name = name
        self.kind = kind
        self.size = size
        self.modifiedNanos = modifiedNanos
    }
}
