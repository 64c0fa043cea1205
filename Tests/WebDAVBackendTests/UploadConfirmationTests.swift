import FerryPluginAPI
import Testing

@testable import WebDAVBackend

@Suite("UploadConfirmation")
struct UploadConfirmationTests {
    static let path = try! RelativePath("a/IMG_1.jpg")
    /// 2022-04-15 05:20:00.25 UTC, with a fraction that a server keeping seconds drops.
    static let mtime: Int64 = 1_650_000_000_250_000_000

    static func prediction() -> RemoteEntry {
        UploadConfirmation.prediction(path: path, size: 100, sentDateNanos: mtime)
    }

    @Test("the prediction keeps the size and the sent Date in whole seconds")
    func prediction() {
        let predicted = Self.prediction()
        #expect(predicted.size == 100)
        #expect(predicted.modifiedNanos == 1_650_000_000_000_000_000)
        #expect(predicted.etag == nil)
        let beforeEpoch = UploadConfirmation.prediction(path: Self.path, size: 1, sentDateNanos: -1)
        #expect(beforeEpoch.modifiedNanos == -1_000_000_000)
    }

    @Test("a server that keeps the Date (nginx) is trusted after three right predictions")
    func learnsPredictable() {
        let confirmation = UploadConfirmation()
        let stored = RemoteEntry(path: Self.path, kind: .file, size: 100, modifiedNanos: 1_650_000_000_000_000_000)
        for expected in [UploadConfirmation.Mode.learning(matches: 1), .learning(matches: 2), .predicted] {
            #expect(confirmation.needsCheck)
            confirmation.learn(predicted: Self.prediction(), actual: stored)
            #expect(confirmation.current == expected)
        }
        #expect(!confirmation.needsCheck)
    }

    @Test("a server that sets its own time and ETag (Apache) is checked for good after one wrong prediction")
    func wrongPredictionTurnsItOff() {
        let confirmation = UploadConfirmation()
        let stored = RemoteEntry(path: Self.path, kind: .file, size: 100,
                                 modifiedNanos: 1_790_000_000_000_000_000, etag: "\"64-5f0\"")
        confirmation.learn(predicted: Self.prediction(), actual: stored)
        #expect(confirmation.current == .checked)
        let right = RemoteEntry(path: Self.path, kind: .file, size: 100, modifiedNanos: 1_650_000_000_000_000_000)
        for _ in 0..<5 { confirmation.learn(predicted: Self.prediction(), actual: right) }
        #expect(confirmation.current == .checked)
        #expect(confirmation.needsCheck)
    }

    @Test("ETags decide when both sides have one, else times; a size difference is always wrong; size alone proves nothing",
          arguments: [
              (RemoteEntry(path: path, kind: .file, size: 100, modifiedNanos: 5, etag: "\"x\""), "\"x\"", true),
              (RemoteEntry(path: path, kind: .file, size: 100, modifiedNanos: 1_650_000_000_000_000_000, etag: "\"y\""), "\"x\"", false),
              (RemoteEntry(path: path, kind: .file, size: 100, modifiedNanos: 1_650_000_000_000_000_000, etag: "\"y\""), nil, true),
              (RemoteEntry(path: path, kind: .file, size: 99, modifiedNanos: 1_650_000_000_000_000_000), nil, false),
              (RemoteEntry(path: path, kind: .file, size: 100, modifiedNanos: nil), nil, false),
          ] as [(RemoteEntry, String?, Bool)])
    func comparison(actual: RemoteEntry, predictedETag: String?, same: Bool) {
        var predicted = Self.prediction()
        predicted.etag = predictedETag
        #expect(UploadConfirmation.isSameVersion(predicted, actual) == same)
    }
}
