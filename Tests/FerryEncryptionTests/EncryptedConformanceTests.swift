@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import LocalBackend
import Testing

/// The backend conformance suite's move check on an encrypted local remote: a move, which
/// seals the file again for its new name, keeps the semantics every backend has (refusal
/// without overwrite, overwrite, into a new folder). The rest of the suite is not run
/// here: an encrypted remote lists in stored-name order and resumes downloads at segment
/// boundaries, which three of its checks do not expect.
@Suite("EncryptedBackend conformance")
struct EncryptedConformanceTests {
    @Test(arguments: BackendConformance.checks.filter { $0.name.hasPrefix("move ") })
    func conformance(_ check: BackendConformance.Check) async throws {
        let root = TemporaryDirectory("ferry-encrypted-root")
        let scratch = TemporaryDirectory("ferry-encrypted-scratch")
        let key = scratch.child("key")
        try MasterKey.generate(at: key)
        let backend = try EncryptedBackend(wrapping: LocalBackend(root: root.path),
                                           settings: EncryptionSettings(key: .keyFile(key), names: .encrypted),
                                           remoteName: "vault", environment: [:])
        do {
            try await check.run(backend, scratch.path)
        } catch let notApplicable as BackendConformance.NotApplicable {
            try Test.cancel(Comment(rawValue: notApplicable.reason))
        }
    }
}
