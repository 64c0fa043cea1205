/// A fixed-size sample of the files a run would replace, for the content hold: the paths
/// with the smallest hashes, so the sample is spread over the whole folder (not its first
/// subfolder in path order), the same on every run of the same plan, and kept in constant
/// memory however many files the plan replaces.
package struct ReplacementSample: Sendable {
    package let capacity: Int
    private var kept: [(hash: UInt64, file: SampledFile)] = []

    package init(capacity: Int) {
        self.capacity = capacity
    }

    package mutating func offer(_ path: String, remote: RemoteVersion, remoteName: String? = nil) {
        let hash = Self.hash(path)
        if kept.count == capacity, let last = kept.last, hash >= last.hash { return }
        let index = kept.firstIndex { $0.hash > hash } ?? kept.count
        kept.insert((hash, SampledFile(path: path, remote: remote, remoteName: remoteName ?? path)), at: index)
        if kept.count > capacity { kept.removeLast() }
    }

    package var files: [SampledFile] { kept.map(\.file).sorted { $0.path.precedesInUTF8Order($1.path) } }

    /// FNV-1a over the UTF-8 bytes: stable across runs and processes (Swift's `Hasher`
    /// is seeded per process).
    static func hash(_ path: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// A file a run would replace: its path, the remote version it would replace, and that
/// version's name as the remote spells it (`FileRecord.remoteSpelling`).
public struct SampledFile: Sendable, Equatable {
    public var path: String
    public var remote: RemoteVersion
    public var remoteName: String
}
