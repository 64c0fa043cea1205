import FerryPluginAPI
import FerryTestSupport
import Foundation

@testable import S3Backend

extension S3TestServer {
    /// A backend on this store's test bucket under `prefix`, with the test keys (or `secret`).
    func backend(prefix: String, secret: String = S3TestServer.secretKey) throws -> S3Backend {
        let addressing = try S3Addressing(endpoint: endpoint, bucket: Self.bucket, prefix: prefix, virtualHost: false)
        let credentials = S3Credentials(accessKeyID: Self.accessKey, secretAccessKey: secret, source: "the test")
        return S3Backend(configuration: S3RemoteConfiguration(addressing: addressing, region: "us-east-1", credentials: credentials))
    }
}
