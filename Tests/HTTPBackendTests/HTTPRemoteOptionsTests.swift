import FerryPluginAPI
import Testing

@testable import HTTPBackend

@Suite("HTTP remote options")
struct HTTPRemoteOptionsTests {
    @Test("the defaults are what an ad-hoc http:// URL gets")
    func defaults() throws {
        #expect(try HTTPRemoteOptions(options: ["url": "http://h/x"]) == HTTPRemoteOptions())
        #expect(HTTPRemoteOptions() == HTTPRemoteOptions(listing: .auto, upload: .put, rename: .auto, allowsDelete: true))
    }

    @Test("every option read")
    func everything() throws {
        let options = try HTTPRemoteOptions(options: [
            "listing": "HTML", "upload": "post", "upload_url": "https://photos.example/api/upload?album=1",
            "upload_field": "media", "rename": "none", "delete": "false",
        ])
        #expect(options == HTTPRemoteOptions(listing: .html, upload: .post(endpoint: "https://photos.example/api/upload?album=1",
                                                                            field: "media"),
                                             rename: .none, allowsDelete: false))
        #expect(try HTTPRemoteOptions(options: ["upload": "post", "upload_url": "http://h/upload"]).upload
                == .post(endpoint: "http://h/upload", field: "file"))
        #expect(try HTTPRemoteOptions(options: ["upload": "none", "listing": "json", "rename": "move"])
                == HTTPRemoteOptions(listing: .json, upload: .none, rename: .move))
    }

    @Test("wrong values say what is expected", arguments: [
        (["listing": "xml"], "listing must be one of auto, json, html, none, not 'xml'"),
        (["rename": "copy"], "rename must be one of auto, move, none, not 'copy'"),
        (["upload": "ftp"], "upload must be one of put, post, none, not 'ftp'"),
        (["delete": "maybe"], "delete must be true or false, not 'maybe'"),
        (["upload": "post"], "upload: post needs upload_url"),
        (["upload": "post", "upload_url": "ftp://h/up"], "upload_url must be an http:// or https:// URL"),
        (["upload": "post", "upload_url": "http:///up"], "has no host"),
        (["upload": "post", "upload_url": "http://me:pw@h/up"], "not in upload_url"),
        (["upload": "post", "upload_url": "http://h/up", "upload_field": ""], "upload_field must not be empty"),
        (["upload_url": "http://h/up"], "only apply to upload: post"),
        (["upload": "put", "upload_field": "file"], "only apply to upload: post"),
    ])
    func wrong(options: [String: String], message: String) {
        do {
            let parsed = try HTTPRemoteOptions(options: options)
            Issue.record("accepted as \(parsed)")
        } catch {
            #expect(error.code == .invalidName)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("config.yml's reader knows the words of listing, upload and rename, so a wrong one is refused at its line and column")
    func pluginDeclaresTheWords() throws {
        for (name, words) in [("listing", ["auto", "json", "html", "none"]), ("upload", ["put", "post", "none"]),
                              ("rename", ["auto", "move", "none"])] {
            let declared = try #require(HTTPBackend.plugin.options.first { $0.name == name })
            #expect(Set(declared.values) == Set(words), "\(name)")
            // Every declared word is one the options accept (post needs its endpoint).
            for word in declared.values {
                var options = [name: word]
                if word == "post" { options["upload_url"] = "http://h/upload" }
                #expect(throws: Never.self) { try HTTPRemoteOptions(options: options) }
            }
        }
    }
}
