import Foundation
import FerryPluginAPI
import FerryTestSupport

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
import FerryJournal
@testable import FerryPlanning

/// The tree and the run the staging tests share: many small photos in seven folders and
/// one video above the staging size, moved by a real `PairRun`.
enum SmallFileRun {
    /// Writes `small` 4 KiB photos and one 3 MiB video into `folder`'s child `name`.
    static func tree(_ folder: TemporaryDirectory, _ name: String, small: Int) throws -> String {
        let root = folder.child(name)
        for index in 0..<small {
            try TreeGenerator.write(at: root + "/d\(index % 7)/IMG_\(index).jpg", size: 4096, seed: UInt64(index))
        }
        try TreeGenerator.write(at: root + "/VID_1.mov", size: 3 << 20, seed: 99)
        return root
    }

    /// A pull's three folders under `folder`: a remote with `tree`'s files, an empty local
    /// folder and a state folder's path.
    static func pullFolders(_ folder: TemporaryDirectory, small: Int) throws -> (remote: String, local: String, state: String) {
        let remote = try tree(folder, "remote", small: small)
        let local = folder.child("local")
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        return (remote, local, folder.child("state"))
    }

    static func run(_ mode: SyncMode, local: String, remote backend: any Backend, state: String,
                    config: Config = .defaults) async throws -> RunSummary {
        let pair = FolderPair(name: "test", localRoot: local, backend: backend, remoteRoot: .root, mode: mode, ignore: [])
        return try await PairRun(pair: pair, config: config, state: StateFolder(directory: state), options: RunOptions(),
                                 sink: DiscardingEventSink(), progress: RunProgress()).run()
    }
}
