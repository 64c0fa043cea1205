import Logging

/// HummingbirdCore's lines as the daemon logs them: its errors pass (a failed accept, say),
/// except the one it logs when its task is cancelled, which is how the daemon stops it.
struct ServerLogFilter: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard !event.message.description.contains("CancellationError") else { return }
        base.log(event: event)
    }

    static func logger(from logger: Logger) -> Logger {
        var filtered = Logger(label: logger.label) { _ in ServerLogFilter(base: logger.handler) }
        filtered.logLevel = max(logger.logLevel, .error)
        return filtered
    }
}
