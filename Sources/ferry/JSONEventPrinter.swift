import FerryCore

/// `--json`: one object per event per line on stdout, for scripts.
struct JSONEventPrinter: RunEventSink {
    /// The folder the events belong to, on every event: several folders may run at once.
    var folder: String?

    func emit(_ event: RunEvent) {
        StandardStreams.output(event.jsonObject(folder: folder).text)
    }

    static func summaryObject(_ summary: RunSummary) -> JSONObject {
        RunEvent.summaryObject(summary)
    }
}
