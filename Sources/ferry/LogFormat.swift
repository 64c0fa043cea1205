import ArgumentParser
import FerryCore
import FerrySystem
import Foundation
import Logging

/// How log lines look on stderr: `text` for people (the default), `json` for log
/// collectors (one object per line).
enum LogFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text
    case json
}

/// One JSON object per log line on stderr: time, level, label, message and metadata.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object = JSONObject()
        object.add("time", SystemClock().wallDate().ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day()))
        object.add("level", event.level.rawValue)
        object.add("label", label)
        object.add("message", event.message.description)
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            object.add(key, "\(value)")
        }
        StandardStreams.error(object.text)
    }
}
