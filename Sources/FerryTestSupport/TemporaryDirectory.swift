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

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
