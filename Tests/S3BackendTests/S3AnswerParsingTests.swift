import FerryPluginAPI
import Foundation
import Testing

@testable import S3Backend

/// ListObjectsV2 pages, error answers and the time format, as stores send them.
@Suite("S3 answer parsing")
struct S3AnswerParsingTests {
    static let page = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>ferry</Name><Prefix>p/</Prefix>
        <KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
        <Contents><Key>p/a &amp; b.jpg</Key><LastModified>2026-11-25T22:01:10.123Z</LastModified>
        <ETag>&quot;9e107d9d372bb6826bd81d3542a419d6&quot;</ETag><Size>1234</Size><StorageClass>STANDARD</StorageClass></Contents>
        <Contents><Key>p/empty</Key><LastModified>2026-11-25T22:01:10Z</LastModified><ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag><Size>0</Size></Contents>
        <CommonPrefixes><Prefix>p/sub/</Prefix></CommonPrefixes>
        <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>
        """.utf8)

    @Test func aPageGivesObjectsPrefixesAndTheNextToken() throws {
        let page = try ListObjectsPage(parsing: Self.page)
        #expect(page.objects.map(\.key) == ["p/a & b.jpg", "p/empty"])
        #expect(page.objects.map(\.size) == [1234, 0])
        #expect(page.objects[0].etag == "\"9e107d9d372bb6826bd81d3542a419d6\"")
        #expect(page.objects[0].lastModifiedNanos == 1_795_644_070_123_000_000)
        #expect(page.commonPrefixes == ["p/sub/"])
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    }

    @Test(arguments: ["", "not xml", "<html><body>proxy error</body></html>",
                      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"])
    func whatIsNotAListingIsRefused(_ body: String) {
        #expect(throws: BackendError.self) { try ListObjectsPage(parsing: Data(body.utf8)) }
    }

    @Test func timesAreNanosecondsSince1970() {
        #expect(ISO8601Time.nanos("1970-01-01T00:00:00Z") == 0)
        #expect(ISO8601Time.nanos("2000-02-29T12:00:00.5Z") == 951_825_600_500_000_000)
        #expect(ISO8601Time.nanos("garbage") == nil)
    }

    static let addressing = try! S3Addressing(endpoint: "http://127.0.0.1:9", bucket: "ferry", prefix: "", virtualHost: false)

    static func error(_ code: String, status: Int, retryAfter: String? = nil) -> BackendError {
        let body = Data("<?xml version=\"1.0\"?><Error><Code>\(code)</Code><Message>m</Message><Resource>/ferry/x</Resource></Error>".utf8)
        return S3ErrorResponse.error(status: status, body: body, method: "PUT", path: "x", retryAfter: retryAfter, addressing: addressing)
    }

    @Test func throttlingAndFailuresAreRetriedHonouringRetryAfter() {
        let slowDown = Self.error("SlowDown", status: 503, retryAfter: "7")
        #expect(slowDown.code == .throttled && slowDown.isRetryable && slowDown.retryAfterSeconds == 7)
        #expect(Self.error("InternalError", status: 500).isRetryable)
        #expect(S3ErrorResponse.error(status: 503, body: Data(), method: "GET", path: "x", retryAfter: nil,
                                      addressing: Self.addressing).isRetryable)
    }

    @Test(arguments: [("AccessDenied", 403, BackendError.Code.permissionDenied), ("NoSuchBucket", 404, .invalidName),
                      ("InvalidAccessKeyId", 403, .authenticationFailed), ("SignatureDoesNotMatch", 403, .authenticationFailed)])
    func refusalsArePermanentAndSayWhatToCheck(_ code: String, _ status: Int, _ expected: BackendError.Code) {
        let error = Self.error(code, status: status)
        #expect(error.code == expected)
        #expect(!error.isRetryable)
        #expect(error.message.contains("check"))
        #expect(!error.message.contains("\n"))
    }

    @Test func aMissingKeyIsNotFoundButAMissingBucketIsNot() {
        #expect(Self.error("NoSuchKey", status: 404).code == .notFound)
        #expect(Self.error("NoSuchBucket", status: 404).code != .notFound)
    }

    @Test func sharedConfigSectionsAndNestedSettings() {
        let file = AWSSharedConfigFile(parsing: "[default]\nregion=eu-north-1\n; c\n[profile x]\ns3 =\n  addressing_style = path\n")
        #expect(file.configProfile("default")?["region"] == "eu-north-1")
        #expect(file.configProfile("x") != nil)
        #expect(file.configProfile("y") == nil)
    }

    @Test func aCheckpointReadsBackOnlyForItsKeyAndFormat() {
        var checkpoint = MultipartCheckpoint(key: "v/big.mov", uploadID: "u-1", partSize: 5 << 20)
        checkpoint.parts = [.init(number: 1, etag: "\"aa\""), .init(number: 2, etag: "bb")]
        #expect(MultipartCheckpoint(text: checkpoint.text, key: "v/big.mov") == checkpoint)
        #expect(checkpoint.etags == [1: "\"aa\"", 2: "\"bb\""])
        #expect(MultipartCheckpoint(text: checkpoint.text, key: "v/other.mov") == nil)
        var future = checkpoint
        future.format = 2
        #expect(MultipartCheckpoint(text: future.text, key: "v/big.mov") == nil)
        #expect(MultipartCheckpoint(text: "upload u-1", key: "v/big.mov") == nil)
    }
}
