import CurlTransport
import FerryPluginAPI
import Foundation

extension S3Backend {
    /// `type: s3` in config.yml, and ad-hoc `s3://BUCKET/PREFIX` URLs, which read the
    /// standard AWS environment.
    public static let plugin = BackendPlugin(
        type: "s3",
        summary: "an S3-compatible object store (AWS S3, SeaweedFS, MinIO, Garage, Ceph RGW)",
        options: [
            .init("bucket", .string, summary: "the bucket (required unless the remote is an s3://BUCKET/PREFIX URL)"),
            .init("prefix", .string, summary: "the key prefix the remote's root stands for, e.g. phones/pixel"),
            .init("url", .string, summary: "s3://BUCKET/PREFIX, instead of bucket and prefix"),
            .init("region", .string, summary: "the bucket's region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile, us-east-1)"),
            .init("endpoint", .url, summary: "the store's URL for a store other than AWS, e.g. http://nas.local:8333 "
                  + "(default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url, AWS)"),
            .init("virtual_host", .boolean, summary: "address the bucket as a host name (default: true for AWS, false with an endpoint)"),
            .init("access_key_env", .string, summary: "name of an environment variable holding the access key id"),
            .init("secret_key_env", .string, summary: "name of an environment variable holding the secret access key"),
            .init("session_token_env", .string, summary: "name of an environment variable holding an STS session token"),
            .init("profile", .string, summary: "a profile in ~/.aws/credentials and ~/.aws/config (default: AWS_PROFILE, default)"),
            .init("multipart_threshold", .string, summary: "files larger than this are sent in parts, several at once (default 64M)"),
            .init("multipart_part_size", .string, summary: "the size of each part (default 16M; grown to stay under 10,000 parts)"),
            .init("multipart_concurrency", .integer, summary: "parts of one file sent at once (default 4)"),
            .init("abandoned_uploads_after", .string,
                  summary: "unfinished uploads older than this are aborted at the start of a push, unless the journal "
                  + "means to continue them (default 7d; 0: never)"),
            .init("ca_file", .path, summary: "a CA bundle to verify the store's certificate with (default: AWS_CA_BUNDLE)"),
            .init("insecure", .boolean, summary: "skip TLS verification (warned about on every run)"),
            .init("connect_timeout", .integer, summary: "seconds to connect (default 15)"),
            .init("stall_timeout", .integer, summary: "seconds without progress before a transfer is retried (default 60)"),
        ] + RemoteTransportOptions.downloadStreamOptions,
        urlSchemes: ["s3"],
        capabilities: S3Backend.staticCapabilities,
        make: { settings throws(BackendError) in
            let environment = ProcessInfo.processInfo.environment
            let configuration = try S3RemoteConfiguration(settings: settings, environment: environment,
                                                          files: .load(environment: environment))
            var streams = CurlTransportSettings()
            try RemoteTransportOptions.applyDownloadStreams(settings, to: &streams)
            return S3Backend(configuration: configuration,
                             multipart: try MultipartSettings(options: settings.options, remote: settings.remoteName),
                             connectTimeout: settings.options["connect_timeout"].flatMap(Int.init),
                             stallTimeout: settings.options["stall_timeout"].flatMap(Int.init),
                             insecure: settings.options["insecure"] == "true",
                             downloadStreams: streams.downloadStreams, multiStreamCutoff: streams.multiStreamCutoff)
        }
    )
}
