@testable import ferry
import Foundation
import Logging
import Testing

/// Log lines of `watch` and `daemon` at the default level, for a person: short, no module
/// label, the folder first, the path after the message, sizes in binary units.
@Suite struct TextLogHandlerTests {
    static let noon = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func perFileLine() {
        let line = TextLogHandler.line(time: Self.noon, level: .info, message: "uploaded",
                                       metadata: ["folder": "photos", "path": "DCIM/a.jpg", "bytes": "1258291",
                                                  "queue": "media", "attempt": "1"])
        #expect(line.hasSuffix(" photos: uploaded DCIM/a.jpg (1.20 MiB)"), "\(line)")
        #expect(line.range(of: #"^\d{2}:\d{2}:\d{2} "#, options: .regularExpression) != nil, "\(line)")
        #expect(!line.contains("queue=") && !line.contains("attempt=") && !line.contains("ferry"), "\(line)")
    }

    @Test func warningsSayTheirLevelAndKeepWhatMatters() {
        let line = TextLogHandler.line(time: Self.noon, level: .warning, message: "remote offline",
                                       metadata: ["folder": "photos", "remote": "nas", "retry_in": "0", "error": ""])
        #expect(line.contains(" warning: photos: remote offline remote=nas"), "\(line)")
        #expect(!line.contains("retry_in") && !line.contains("error="), "zero and empty values say nothing: \(line)")
    }
}
