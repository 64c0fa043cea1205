import Testing

@testable import FerryCore
import FerryDaemon

@Suite("SettleTracker")
struct SettleTrackerTests {
    @Test("a file is ready only after the quiet period with no change")
    func quietPeriod() {
        var tracker = SettleTracker(quietPeriod: 3)
        tracker.changed("a.jpg", written: false, at: 0)
        #expect(tracker.nextDeadline == 3)
        #expect(tracker.takeSettled(at: 2.9).isEmpty)
        #expect(tracker.unsettled == ["a.jpg"])
        #expect(tracker.takeSettled(at: 3).files == ["a.jpg"])
        #expect(tracker.isIdle)
    }

    @Test("a file written slowly for minutes settles once, after its last write and the close")
    func slowWriter() {
        var tracker = SettleTracker(quietPeriod: 2)
        tracker.changed("video.mp4", written: true, at: 0)
        var batches: [SettleTracker.Batch] = []
        // A write every second for 10 minutes: never quiet long enough.
        for second in 1...600 {
            tracker.changed("video.mp4", written: true, at: Double(second))
            let batch = tracker.takeSettled(at: Double(second) + 0.5)
            if !batch.isEmpty { batches.append(batch) }
        }
        #expect(batches.isEmpty)
        tracker.closed("video.mp4", at: 600.2)
        #expect(tracker.takeSettled(at: 602.1).isEmpty)
        #expect(tracker.takeSettled(at: 602.2).files == ["video.mp4"])
    }

    @Test("a file still open for writing waits for the close, or for the long grace when the writer stalls")
    func openFileWaitsForClose() {
        var tracker = SettleTracker(quietPeriod: 2, unclosedGrace: 60)
        tracker.changed("big.mov", written: true, at: 0)
        #expect(tracker.takeSettled(at: 30).isEmpty)
        #expect(tracker.nextDeadline == 60)
        #expect(tracker.takeSettled(at: 60).files == ["big.mov"])
    }

    @Test("a file moved in complete is ready after the quiet period without a close")
    func movedInFile() {
        var tracker = SettleTracker(quietPeriod: 1)
        tracker.changed("IMG_0001.jpg", written: false, at: 5)
        #expect(tracker.takeSettled(at: 6).files == ["IMG_0001.jpg"])
    }

    @Test("a burst of 10,000 new files comes out as one batch")
    func burstIsOneBatch() {
        var tracker = SettleTracker(quietPeriod: 2)
        for index in 0..<10_000 {
            let path = "burst/\(index).jpg"
            let at = Double(index) / 10_000
            tracker.changed(path, written: true, at: at)
            tracker.closed(path, at: at)
        }
        var batches: [SettleTracker.Batch] = []
        var now = 0.0
        // Bounded: a tracker that never went idle would otherwise hang the suite.
        while !tracker.isIdle && now < 3_600 {
            now = max(now + 0.25, tracker.nextDeadline ?? now)
            // Ticks a quarter second apart, as the watcher's.
            let batch = tracker.takeSettled(at: now)
            if !batch.isEmpty { batches.append(batch) }
        }
        #expect(tracker.isIdle, "still busy an hour later")
        #expect(batches.count == 1)
        #expect(batches.reduce(0) { $0 + $1.files.count } == 10_000)
    }

    @Test("a folder that keeps filling up still sends what settled after maxBatchDelay")
    func continuousArrivalIsCapped() {
        var tracker = SettleTracker(quietPeriod: 1)
        var sent = 0
        var now = 0.0
        // A new file every 0.1 s for a minute: never a pause in the burst.
        for index in 0..<600 {
            now = Double(index) / 10
            tracker.changed("f\(index)", written: false, at: now)
            sent += tracker.takeSettled(at: now).files.count
        }
        #expect(sent > 500)
    }

    @Test("a slow writer does not hold back files that settled beside it")
    func openFileDoesNotBlockBatch() {
        var tracker = SettleTracker(quietPeriod: 1)
        tracker.changed("slow.mov", written: true, at: 0)
        tracker.changed("a.jpg", written: false, at: 0)
        tracker.changed("slow.mov", written: true, at: 0.9)
        #expect(tracker.takeSettled(at: 1).files == ["a.jpg"])
    }

    @Test("a deleted file leaves the pending set and is reported as removed")
    func removal() {
        var tracker = SettleTracker(quietPeriod: 2)
        tracker.changed("tmp.jpg", written: true, at: 0)
        tracker.removed("tmp.jpg")
        #expect(tracker.unsettled.isEmpty)
        let batch = tracker.takeSettled(at: 0)
        #expect(batch.removed == ["tmp.jpg"] && batch.files.isEmpty)
    }

    @Test("a folder to rescan waits for the quiet period too, and comes out with the files")
    func folderRescan() {
        var tracker = SettleTracker(quietPeriod: 2)
        tracker.rescan(folder: "new", at: 1)
        tracker.changed("new/a.jpg", written: false, at: 1.5)
        #expect(tracker.takeSettled(at: 2).isEmpty)
        let batch = tracker.takeSettled(at: 3.5)
        #expect(batch.folders == ["new"] && batch.files == ["new/a.jpg"])
    }
}
