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
            try md5Now(path: path, offset: offset, length: length)
        }
    }

    /// The same on the calling thread, which must be a blocking one (`BlockingIO`).
    static func md5Now(path: String, offset: Int64 = 0, length: Int64) throws(BackendError) -> Result {
        try BackendError.catching { () throws -> Result in
            let file = try OpenFile(path, mode: .read)
            var hasher = Insecure.MD5()
            // No larger than the range: a 1 MiB buffer zeroed for every 4 KiB photo was
            // most of the hashing's cost.
            var buffer = [UInt8](repeating: 0, count: Int(max(1, min(Int64(1 << 20), length))))
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
            return Result(base64: digest.base64EncodedString(), hex: hex(digest), bytes: digest)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lower-case hex (String(format:) per byte costs more than the MD5 of a small file).
    static func hex(_ bytes: Data) -> String {
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
