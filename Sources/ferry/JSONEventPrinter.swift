import FerryCore
import FerryEngine

/// `--json`: one object per event per line on stdout, for scripts.
struct JSONEventPrinter: RunEventSink {
    /// The folder the events belong to, on every event: several folders may run at once.
    var folder: String?
    /// The two ends as the person named them, on the summary (`"local": "small", "remote":
    /// "s3://ferry/x"`): where the files went.
    var destination: FolderRunCommand.Destination?

    func emit(_ event: RunEvent) {
        var object = event.jsonObject(folder: folder)
        if case .summary = event, let destination {
            object.add("local", destination.local)
            object.add("remote", destination.remote)
        }
        StandardStreams.output(object.text)
    }

    static func summaryObject(_ summary: RunSummary) -> JSONObject {
        RunEvent.summaryObject(summary)
    }
}
