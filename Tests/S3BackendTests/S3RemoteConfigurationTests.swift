import FerryPluginAPI
import Testing

@testable import S3Backend

/// How a remote's options, the AWS environment and the shared files resolve.
@Suite("S3 remote configuration")
struct S3RemoteConfigurationTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"]

    func resolve(_ options: [String: String], environment: [String: String] = keys,
                 files: S3RemoteConfiguration.SharedFiles = .init()) throws(BackendError) -> S3RemoteConfiguration {
        try S3RemoteConfiguration(settings: BackendSettings(remoteName: "store", options: options), environment: environment, files: files)
    }

    @Test func anAdHocURLGivesBucketAndPrefixAndTheEnvironmentTheRest() throws {
        let environment = Self.keys.merging(["AWS_REGION": "eu-west-3", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:8333",
                                             "AWS_SESSION_TOKEN": "tok"]) { $1 }
        let configuration = try resolve(["url": "s3://photos/phones/pixel/"], environment: environment)
        #expect(configuration.addressing.bucket == "photos")
        #expect(configuration.addressing.prefix == "phones/pixel/")
        #expect(configuration.region == "eu-west-3")
        #expect(configuration.addressing.endpoint == "http://127.0.0.1:8333")
        #expect(!configuration.addressing.virtualHost)
        #expect(configuration.credentials.sessionToken == "tok")
        #expect(configuration.addressing.objectURL(key: "phones/pixel/a b.jpg") == "http://127.0.0.1:8333/photos/phones/pixel/a%20b.jpg")
    }

    @Test func withoutAnEndpointItIsAWSInVirtualHostStyle() throws {
        let configuration = try resolve(["bucket": "media", "region": "us-west-2"])
        #expect(configuration.addressing.objectURL(key: "x.jpg") == "https://media.s3.us-west-2.amazonaws.com/x.jpg")
        #expect(configuration.addressing.bucketURL(query: S3Query([("prefix", "a/"), ("list-type", "2")]))
            == "https://media.s3.us-west-2.amazonaws.com/?list-type=2&prefix=a%2F")
    }

    @Test func virtualHostCanBeChosenForAnEndpoint() throws {
        let configuration = try resolve(["bucket": "media", "endpoint": "https://s3.example.org", "virtual_host": "true"])
        #expect(configuration.addressing.objectURL(key: "x") == "https://media.s3.example.org/x")
        #expect(configuration.caFile == nil)
    }

    @Test func namedEnvironmentVariablesComeFirst() throws {
        let environment = Self.keys.merging(["MY_KEY": "AKIDMINE", "MY_SECRET": "mine"]) { $1 }
        let configuration = try resolve(["bucket": "b-1", "endpoint": "http://h:1", "access_key_env": "MY_KEY", "secret_key_env": "MY_SECRET"],
                                        environment: environment)
        #expect(configuration.credentials.accessKeyID == "AKIDMINE")
        #expect(configuration.credentials.secretAccessKey == "mine")
    }

    @Test func aMissingNamedVariableSaysWhichOne() {
        #expect(throws: BackendError.self) { try resolve(["bucket": "bbb", "access_key_env": "NOPE", "secret_key_env": "NOPE2"]) }
        do {
            _ = try resolve(["bucket": "bbb", "access_key_env": "NOPE", "secret_key_env": "NOPE2"])
        } catch {
            #expect(error.code == .authenticationFailed)
            #expect(error.message.contains("NOPE"))
        }
    }

    @Test func aProfileComesFromTheSharedFiles() throws {
        let files = S3RemoteConfiguration.SharedFiles(
            credentials: AWSSharedConfigFile(parsing: """
                [default]
                aws_access_key_id = AKIDDEFAULT
                aws_secret_access_key = default-secret
                # a comment
                [nas]
                aws_access_key_id=AKIDNAS
                aws_secret_access_key = nas-secret
                """),
            config: AWSSharedConfigFile(parsing: """
                [profile nas]
                region = eu-central-1
                endpoint_url = http://nas.local:8333
                s3 =
                  addressing_style = path
                """))
        let configuration = try resolve(["bucket": "bbb", "profile": "nas"], environment: Self.keys, files: files)
        #expect(configuration.credentials.accessKeyID == "AKIDNAS")
        #expect(configuration.region == "eu-central-1")
        #expect(configuration.addressing.endpoint == "http://nas.local:8333")
        #expect(!configuration.credentials.description.contains("nas-secret"))
        let viaEnvironment = try resolve(["bucket": "bbb"], environment: ["AWS_PROFILE": "nas"], files: files)
        #expect(viaEnvironment.credentials.accessKeyID == "AKIDNAS")
        let fallback = try resolve(["bucket": "bbb"], environment: [:], files: files)
        #expect(fallback.credentials.accessKeyID == "AKIDDEFAULT")
    }

    @Test func noCredentialsAnywhereIsAOneLineError() {
        do {
            _ = try resolve(["bucket": "bbb"], environment: [:])
            Issue.record("resolved without credentials")
        } catch {
            #expect(error.code == .authenticationFailed)
            #expect(error.message.contains("AWS_ACCESS_KEY_ID"))
        }
    }

    @Test(arguments: ["s3://", "s3:///prefix", "http://bucket/x"])
    func badURLsAreRefused(_ url: String) {
        #expect(throws: BackendError.self) { try resolve(["url": url]) }
    }

    @Test(arguments: ["s3://AKIAUSER:supersecret@bucket/x", "s3://AKIAUSER:supersecret@127.0.0.1:9000/bucket"])
    func credentialsInTheURLAreRefusedWithoutShowingThem(_ url: String) {
        let error = #expect(throws: BackendError.self) { try resolve(["url": url]) }
        #expect(error?.message.contains("supersecret") == false)
        #expect(error?.message.contains("AKIAUSER:***@") == true)
        #expect(error?.message.contains("AWS_ACCESS_KEY_ID") == true)
    }

    @Test(arguments: ["Bad_Upper", "ab", "a/b"])
    func badBucketNamesAreRefused(_ bucket: String) {
        #expect(throws: BackendError.self) { try resolve(["bucket": bucket, "endpoint": "http://h:1"]) }
    }

    @Test func anEndpointWithAPathIsRefused() {
        #expect(throws: BackendError.self) { try resolve(["bucket": "bbb", "endpoint": "http://h:1/sub"]) }
    }

    @Test func theQueryIsSentInCanonicalOrder() {
        let query = S3Query([("prefix", "a b/ü"), ("delimiter", "/"), ("list-type", "2"), ("continuation-token", "x+y=")])
        #expect(query.encoded == "?continuation-token=x%2By%3D&delimiter=%2F&list-type=2&prefix=a%20b%2F%C3%BC")
    }
}
