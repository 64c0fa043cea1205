import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// Reads what the content hold looks at (`ContentLook`): the first bytes of sampled local
/// files, through the folder's anchor (a link planted in the folder is not followed), and,
/// only for those that look encrypted, the first bytes of the remote version they would
/// replace. So an ordinary run sends no request for it. A file or version that cannot be
/// read says nothing (`unknown`); neither does a remote that cannot read part of a file
/// (an encrypted remote, an exec plugin): there only the replacement share holds.
package struct ContentSampler {
    package let localRoot: String
    package let backend: any Backend
    package let remoteRoot: RelativePath

    package init(localRoot: String, backend: any Backend, remoteRoot: RelativePath) {
        self.localRoot = localRoot
        self.backend = backend
        self.remoteRoot = remoteRoot
    }

    package func looks(of files: [SampledFile]) async -> [(path: String, look: ContentLook)] {
        let root = localRoot
        let paths = files.map(\.path)
        let current = await BlockingIO.run { Self.localLooks(of: paths, in: root) }
        var result: [(path: String, look: ContentLook)] = []
        for (file, look) in zip(files, current) {
            guard look == .looksEncrypted else {
                result.append((file.path, look))
                continue
            }
            result.append((file.path, ContentLook.change(from: await previousLook(of: file), to: look)))
        }
        return result
    }

    private func previousLook(of file: SampledFile) async -> ContentLook {
        guard backend.capabilities.rangedRead, file.remote.size > 0, let relative = try? RelativePath(file.remoteName) else {
            return .unknown
        }
        let path = remoteRoot.appending(relative)
        let expected = RemoteEntry(path: path, kind: .file, size: file.remote.size, modifiedNanos: file.remote.modifiedNanos,
                                   etag: file.remote.etag)
        let count = min(Int64(ContentLook.previousSampleSize), file.remote.size)
        guard let data = try? await backend.read(path, range: 0 ..< count, expected: expected,
                                                 observer: NullTransferObserver()) else { return .unknown }
        return ContentLook.of(name: Self.name(file.path), prefix: [UInt8](data))
    }

    static func localLooks(of paths: [String], in root: String) -> [ContentLook] {
        guard let folder = try? AnchoredFolder(root) else { return paths.map { _ in .unknown } }
        var buffer = [UInt8](repeating: 0, count: ContentLook.sampleSize)
        return paths.map { path in
            guard let file = try? folder.open(path, .read), let count = try? file.read(into: &buffer, at: 0) else {
                return .unknown
            }
            return ContentLook.of(name: name(path), prefix: Array(buffer[..<count]))
        }
    }

    private static func name(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
