import FerryPluginAPI
import Testing

@testable import WebDAVBackend

@Suite("WebDAV plugin options")
struct WebDAVPluginOptionTests {
    func chunkSize(_ value: String?) throws(BackendError) -> Int64 {
        try WebDAVBackend.uploadChunkSize(BackendSettings(remoteName: "nas", options: value.map { ["upload_chunk_size": $0] } ?? [:]))
    }

    static let mebibyte: Int64 = 1 << 20
    static let acceptedSizes: [(String, Int64)] = [
        ("0", 0), ("64M", 64 * mebibyte), ("64MiB", 64 * mebibyte), ("16 mb", 16 * mebibyte),
        ("1G", 1024 * mebibyte), ("2048k", 2 * mebibyte), ("1048576", mebibyte),
    ]

    @Test("upload_chunk_size takes sizes in powers of 1024, or 0 for one PUT per file", arguments: acceptedSizes)
    func accepted(value: String, bytes: Int64) throws {
        #expect(try chunkSize(value) == bytes)
    }

    @Test("without upload_chunk_size, chunks are 64 MiB")
    func defaultChunkSize() throws {
        #expect(try chunkSize(nil) == 64 * Self.mebibyte)
        #expect(WebDAVBackend.defaultUploadChunkSize == 64 * Self.mebibyte)
    }

    @Test("anything else is refused with one line naming the remote and the option", arguments: [
        "64X", "-1", "1.5M", "", "M", "512k", "1000", "9999999999G",
    ])
    func refused(value: String) {
        #expect {
            _ = try chunkSize(value)
        } throws: { error in
            let message = (error as? BackendError)?.message ?? ""
            return message.contains("remote 'nas'") && message.contains("upload_chunk_size") && !message.contains("\n")
        }
    }

    func directPut(_ value: String?) throws(BackendError) -> WebDAVBackend.DirectPut {
        try WebDAVBackend.directPut(BackendSettings(remoteName: "nas", options: value.map { ["direct_put": $0] } ?? [:]))
    }

    @Test("direct_put is auto unless set to off; anything else is refused in one line")
    func directPutValues() throws {
        #expect(try directPut(nil) == .auto)
        #expect(try directPut("auto") == .auto)
        #expect(try directPut("off") == .off)
        for wrong in ["on", "Off", "", "false"] {
            #expect {
                _ = try directPut(wrong)
            } throws: { error in
                let message = (error as? BackendError)?.message ?? ""
                return message.contains("remote 'nas'") && message.contains("direct_put") && !message.contains("\n")
            }
        }
        // config.yml's reader checks the same words (at the value's line and column).
        let option = try #require(WebDAVBackend.plugin.options.first { $0.name == "direct_put" })
        #expect(option.values == ["auto", "off"])
    }
}
