import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

/// `Backend.listTree` stops a tree without end at its bounds, with an error that names them.
@Suite("listing bounds")
struct ListingBoundsTests {
    /// `depth` nested folders `d/d/…`, a file in each.
    static func deepTree(_ depth: Int) -> InMemoryBackend {
        let backend = InMemoryBackend()
        var folder = ""
        for _ in 0..<depth {
            folder += "d/"
            backend.put(folder + "f.txt", Data("x".utf8), modifiedNanos: 1)
        }
        return backend
    }

    @Test("a tree exactly as deep as the bound is listed; one level more is refused, naming limits.remote_depth")
    func depth() async throws {
        let bounds = ListingBounds(maxDepth: 10, maxEntries: 1000)
        #expect(try await Self.deepTree(10).listTree(.root, bounds: bounds).count == 10)
        do {
            _ = try await Self.deepTree(11).listTree(.root, bounds: bounds)
            Issue.record("a tree 11 deep was listed with a bound of 10")
        } catch {
            #expect(error.code == .protocolViolation && !error.isRetryable)
            #expect(error.message.contains("deeper than 10 levels") && error.message.contains("limits.remote_depth"), "\(error)")
        }
        // Depth counts from the folder listed: d/d/f.txt and the 10 levels below.
        #expect(try await Self.deepTree(12).listTree(try RelativePath("d/d"), bounds: bounds).count == 11)
    }

    @Test("more files and folders than the bound are refused, naming limits.remote_entries")
    func entries() async throws {
        let backend = InMemoryBackend()
        for index in 0..<50 { backend.put("a/f\(index).txt", Data("x".utf8), modifiedNanos: 1) }
        // 50 files and the folder a/.
        #expect(try await backend.listTree(.root, bounds: ListingBounds(maxDepth: 5, maxEntries: 51)).count == 50)
        do {
            _ = try await backend.listTree(.root, bounds: ListingBounds(maxDepth: 5, maxEntries: 50))
            Issue.record("51 entries were listed with a bound of 50")
        } catch {
            #expect(error.message.contains("more than 50 files and folders") && error.message.contains("limits.remote_entries"),
                    "\(error)")
        }
    }
}
