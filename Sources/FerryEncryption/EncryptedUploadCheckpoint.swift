import FerryPluginAPI
import Foundation

/// What an encrypted upload records before it sends a byte (`TransferObserver.uploadCheckpoint`),
/// so that an interrupted one can be continued: the header it encrypts with, and the latest
/// checkpoint of the backend underneath (S3's multipart upload), wrapped.
///
/// Continuing an encrypted upload means encrypting the rest of the file again under the
/// same file key and nonces. That is only safe for the same plaintext, so it happens only
/// when the core says the source is the version the interrupted upload read (same size,
/// modification time and file), and the backend underneath checks that the stored bytes end
/// as the new encryption's do at that point before it appends.
struct EncryptedUploadCheckpoint: Codable, Equatable {
    var format = Self.formatName
    var header: String
    var inner: String?

    static let formatName = "ferry-encryption-upload-1"

    init(header: [UInt8], inner: String?) {
        self.header = Hex.encode(header)
        self.inner = inner
    }

    var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The checkpoint in `text`, or nil when it is none of an encrypted upload's (none
    /// recorded, or one written before this format).
    static func decode(_ text: String?) -> EncryptedUploadCheckpoint? {
        guard let text, let checkpoint = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)),
              checkpoint.format == formatName else { return nil }
        return checkpoint
    }

    /// The header's bytes, when they are a header of this format.
    var headerBytes: [UInt8]? {
        guard let bytes = Hex.decode(header), ContentFormat.cipher(ofHeader: bytes) != nil else { return nil }
        return bytes
    }
}

/// How one encrypted upload starts: continuing an earlier attempt with its header, or
/// afresh with a new one. A pure decision over the request and what the backend can do.
struct EncryptedUploadStart {
    /// The earlier attempt's header, when this upload continues it; nil: a new header.
    let header: [UInt8]?
    /// The checkpoint of the backend underneath from the earlier attempt: handed back to
    /// it whether or not the upload continues (it discards an upload it cannot continue).
    let innerState: String?

    var continues: Bool { header != nil }

    init(_ request: UploadRequest, innerResumes: Bool) {
        let earlier = EncryptedUploadCheckpoint.decode(request.resumeState)
        innerState = earlier?.inner
        header = innerResumes && request.mayResume ? earlier?.headerBytes : nil
    }
}

/// The core's observer, with the inner backend's checkpoints wrapped with the header.
struct EncryptedCheckpointObserver: TransferObserver {
    let base: any TransferObserver
    let header: [UInt8]

    func bytesTransferred(_ count: Int) -> Duration { base.bytesTransferred(count) }
    var isCancelled: Bool { base.isCancelled }
    func uploadCheckpoint(_ state: String) async {
        await base.uploadCheckpoint(EncryptedUploadCheckpoint(header: header, inner: state).encoded)
    }
}
