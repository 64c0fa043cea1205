import FerrySystem
import Foundation
import Logging

/// Log lines for a person on a terminal: `14:02:11 photos: uploaded DCIM/a.jpg (1.20 MiB)`.
/// No module label, the folder as a prefix, the path after the message, sizes in binary
/// units, and only the metadata that says something (`--log-format json` keeps it all).
struct TextLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
        var line = Self.line(time: SystemClock().wallDate(), level: event.level, message: event.message.description, metadata: merged)
        // Paths under the current directory as the person typed them: ./src, not /home/….
        let here = FileManager.default.currentDirectoryPath
        if here != "/" { line = line.replacingOccurrences(of: here + "/", with: "./") }
        // On a terminal, start at the line's beginning and clear it: Ctrl-C's echoed "^C"
        // would otherwise stand in front of the next line.
        // On a terminal, broken between words to fit its width (a live table below counts on it).
        let terminal = StandardStreams.errorIsTerminal
        for part in LineWrap.words(line, width: terminal ? TerminalSize.columns - 1 : nil) {
            StandardStreams.error(part, prefix: terminal ? "\r\u{1B}[K" : "")
        }
    }

    /// Metadata left out of text lines: repeated elsewhere on the line, or noise at zero.
    private static let quiet: Set<String> = ["folder", "path", "bytes", "queue", "attempt"]

    static func line(time: Date, level: Logger.Level, message: String, metadata: [String: String]) -> String {
        let clock = DateFormatter()
        clock.locale = Locale(identifier: "en_US_POSIX")
        clock.dateFormat = "HH:mm:ss"
        var line = clock.string(from: time)
        if level >= .warning { line += " \(level.rawValue):" }
        if let folder = metadata["folder"] { line += " \(folder):" }
        line += " " + message
        if let path = metadata["path"] { line += " " + path }
        if let bytes = metadata["bytes"].flatMap({ Int64($0) }) { line += " (\(ByteFormat.string(bytes)))" }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where !quiet.contains(key) {
            if value == "0" || value.isEmpty { continue }
            line += " \(key)=\(value)"
        }
        return line
    }
}
