import Foundation

/// A fresh folder under the system's temporary folder, removed when the value is dropped.
public final class TemporaryDirectory: Sendable {
    public let path: String

    /// `base`: the folder to make it in; nil for `$TMPDIR` (else `/tmp`).
    public init(_ label: String = "ferry-test", in base: String? = nil) {
        let base = base ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "cannot create a temporary folder under \(base)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func child(_ name: String) -> String { path + "/" + name }

    /// Removed on a thread of its own: a deinit runs wherever the last reference went, most
    /// often on one of the cooperative pool's two threads, and removing a tree of thousands
    /// of files there held back every other test's `await` (seen in stack samples of the
    /// whole suite). The test process waits for removals still running when it exits.
    deinit {
        let path = self.path
        StopsInFlight.begin()
        Thread.detachNewThread {
            try? FileManager.default.removeItem(atPath: path)
            StopsInFlight.end()
        }
    }
}
