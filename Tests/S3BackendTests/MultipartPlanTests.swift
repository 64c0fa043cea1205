import Foundation
import Testing

@testable import S3Backend

/// How files are cut into parts, and the ETag a multipart object gets.
@Suite("S3 multipart plan")
struct MultipartPlanTests {
    @Test func partsAreThePreferredSizeButTheLast() {
        let plan = MultipartPlan(fileSize: 40 << 20, preferredPartSize: 16 << 20)
        #expect(plan.partCount == 3)
        #expect(plan.range(ofPart: 1) == (0, 16 << 20))
        #expect(plan.range(ofPart: 3) == (32 << 20, 8 << 20))
    }

    @Test func partsAreNeverUnderFiveMebibytes() {
        #expect(MultipartPlan(fileSize: 100 << 20, preferredPartSize: 1 << 20).partSize == 5 << 20)
    }

    @Test(arguments: [Int64(1) << 40, Int64(5) << 40, Int64(48_828_125_000)])
    func aHugeFileStaysUnderTenThousandParts(_ size: Int64) {
        let plan = MultipartPlan(fileSize: size, preferredPartSize: 16 << 20)
        #expect(plan.partCount <= 10_000)
        #expect(plan.partSize % (1 << 20) == 0)
        let last = plan.range(ofPart: plan.partCount)
        #expect(last.offset + last.length == size)
        #expect(last.length > 0)
    }

    @Test func anExactMultipleHasNoEmptyLastPart() {
        let plan = MultipartPlan(fileSize: 32 << 20, preferredPartSize: 16 << 20)
        #expect(plan.partCount == 2)
        #expect(plan.range(ofPart: 2).length == 16 << 20)
    }

    @Test func theMultipartETagIsTheMD5OfThePartDigests() {
        // Two parts whose MD5s are those of "a" and "b": the S3 rule, computed independently.
        let a = Data([0x0c, 0xc1, 0x75, 0xb9, 0xc0, 0xf1, 0xb6, 0xa8, 0x31, 0xc3, 0x99, 0xe2, 0x69, 0x77, 0x26, 0x61])
        let b = Data([0x92, 0xeb, 0x5f, 0xfe, 0xe6, 0xae, 0x2f, 0xec, 0x3a, 0xd7, 0x1c, 0x77, 0x75, 0x31, 0x57, 0x8f])
        #expect(S3Backend.multipartETag([a, b]) == "\"" + "96e024ba2074fe77e8e965ba43a704be" + "-2\"")
    }

    @Test func sizesAndCountsComeFromTheOptions() throws {
        let settings = try MultipartSettings(options: ["multipart_threshold": "8M", "multipart_part_size": "5M",
                                                       "multipart_concurrency": "2", "abandoned_uploads_after": "0"], remote: "r")
        #expect(settings.threshold == 8 << 20 && settings.partSize == 5 << 20 && settings.concurrency == 2)
        #expect(settings.abandonAfterSeconds == nil)
        let defaultAge: Int64? = 7 * 86_400
        #expect(MultipartSettings().abandonAfterSeconds == defaultAge)
        #expect(try MultipartSettings(options: ["abandoned_uploads_after": "36h"], remote: "r").abandonAfterSeconds == 36 * 3600)
        #expect(throws: (any Error).self) { try MultipartSettings(options: ["abandoned_uploads_after": "soon"], remote: "r") }
        #expect(throws: (any Error).self) { try MultipartSettings(options: ["multipart_part_size": "1M"], remote: "r") }
    }
}
