import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// The MD5 of a range of a local file, read in 1 MiB blocks on a blocking thread: the
/// `Content-MD5` of an upload, which the store checks against what it received.
enum FileDigest {
    struct Result: Sendable {
        /// Base64, for `Content-MD5`.
        var base64: String
        /// Lower-case hex, as in a single-part ETag.
        var hex: String
        /// The 16 bytes (a multipart ETag is the MD5 of the parts' digests).
        var bytes: Data
    }

    static func md5(path: String, offset: Int64 = 0, length: Int64) async throws(BackendError) -> Result {
        try await BlockingIO.run { () throws(BackendError) -> Result in
            try BackendError.catching { () throws -> Result in
                let file = try OpenFile(path, mode: .read)
                var hasher = Insecure.MD5()
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                var position = offset
                let end = offset + length
                while position < end {
                    let want = Int(min(Int64(buffer.count), end - position))
                    let count = try buffer.withUnsafeMutableBytes { bytes in
                        try file.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<want]), at: position)
                    }
                    if count == 0 {
                        throw BackendError(.changedDuringTransfer, "the file became shorter while it was hashed", path: path)
                    }
                    hasher.update(data: buffer[0..<count])
                    position += Int64(count)
                }
                let digest = Data(hasher.finalize())
                return Result(base64: digest.base64EncodedString(), hex: digest.map { String(format: "%02x", $0) }.joined(), bytes: digest)
            }
        }
    }
}
