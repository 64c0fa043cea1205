import FerryPluginAPI
import FerrySystem
import Foundation

/// libcurl writes the body of any final answer into the download's partial file, an
/// error's XML included. The core continues a partial file from its size, so an error body
/// left there would become the start of the file on the next attempt: it is read back
/// (for the error's code) and cut off.
enum PartialFileErrorBody {
    /// The bytes written after `offset` (at most 64 KiB), then the file cut back to `offset`.
    static func takeBack(_ path: String, from offset: Int64) async -> Data {
        await BlockingIO.run { () -> Data in
            guard let file = try? OpenFile(path, mode: .writeExisting) else { return Data() }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let count = (try? file.read(into: &buffer, at: offset)) ?? 0
            try? file.truncate(to: offset)
            return Data(buffer.prefix(max(0, count)))
        }
    }
}
