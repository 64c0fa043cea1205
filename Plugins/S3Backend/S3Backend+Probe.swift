import CurlTransport
import FerryPluginAPI
import Crypto
import Foundation

extension S3Backend {
    /// Asks the store what it supports by writing, listing and removing two small probe
    /// objects under the remote's prefix (`.ferry-probe-UUID`, `.ferry-probe-UUID-mp`).
    public func storeFeatures() async throws(BackendError) -> S3StoreFeatures {
        let name = ".ferry-probe-" + UUID().uuidString.lowercased()
        let key = addressing.prefix + name
        let path = try RelativePath(name)
        let body = Data("ferry probe".utf8)
        let digest = Data(Insecure.MD5.hash(data: body))

        // Conditional create: the first PUT creates, the second must be refused.
        var conditional = false
        var userMetadata = false
        let sentTime = S3ModificationTime.header(nanos: 1_700_000_000_123_456_789)
        let created = try await send("PUT", url: addressing.objectURL(key: key),
                                     headers: [("If-None-Match", "*"), ("Content-MD5", digest.base64EncodedString()),
                                               ("x-amz-meta-mtime", sentTime)], body: .data(body))
        if created.isSuccess {
            // User metadata: the time sent must come back.
            let head = try await send("HEAD", url: addressing.objectURL(key: key), responseBody: .discard)
            userMetadata = head.status == 200 && head.header("x-amz-meta-mtime") == sentTime
            let again = try await send("PUT", url: addressing.objectURL(key: key),
                                       headers: [("If-None-Match", "*"), ("Content-MD5", digest.base64EncodedString())], body: .data(body))
            conditional = again.status == 412
        } else if !(400..<500).contains(created.status) || created.status == 403 {
            throw failure(created, method: "PUT (probe)", path: path)
        }

        // ListObjectsV2: a V2 answer carries KeyCount.
        let listing = try await send("GET", url: addressing.bucketURL(query: S3Query([("list-type", "2"), ("max-keys", "1"),
                                                                                      ("prefix", key)])))
        let listsV2 = listing.status == 200 && String(decoding: listing.body, as: UTF8.self).contains("<KeyCount>")

        // Multipart ETags: one small part (the last part may be any size), then the ETag.
        var multipartETags = false
        let multipartKey = key + "-mp"
        let create = try await send("POST", url: addressing.objectURL(key: multipartKey, query: S3Query([("uploads", "")])),
                                    body: .data(Data()))
        if create.isSuccess, let id = try? MultipartAnswers.uploadID(create.body) {
            let part = try await send("PUT", url: addressing.objectURL(key: multipartKey, query: S3Query([("partNumber", "1"), ("uploadId", id)])),
                                      headers: [("Content-MD5", digest.base64EncodedString())], body: .data(body))
            if part.isSuccess, let etag = part.header("etag").map(ETag.normalized) {
                let complete = try await send("POST", url: addressing.objectURL(key: multipartKey, query: S3Query([("uploadId", id)])),
                                              headers: [("Content-Type", "application/xml")],
                                              body: .data(MultipartAnswers.completionBody([(1, etag)])))
                let completed = MultipartAnswers.completion(complete.body)
                multipartETags = complete.isSuccess && completed.error == nil && completed.etag == Self.multipartETag([digest])
            } else {
                try? await abort(key: multipartKey, uploadID: id, path: path)
            }
        }
        try? await deleteKey(key, path: path)
        try? await deleteKey(multipartKey, path: path)
        return S3StoreFeatures(listObjectsV2: listsV2, conditionalWrites: conditional, multipartETags: multipartETags,
                               userMetadata: userMetadata)
    }
}
