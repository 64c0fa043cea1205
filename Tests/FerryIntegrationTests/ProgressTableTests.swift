@testable import ferry
import Testing

/// The progress table as text, for given numbers and widths.
@Suite struct ProgressTableTests {
    static let mib: Int64 = 1024 * 1024

    static func row(_ name: String, done: Int, total: Int, bytes: Int64, of totalBytes: Int64, rate: Double?,
                    current: [String] = []) -> ProgressTable.Row {
        ProgressTable.Row(name: name, filesDone: done, filesFailed: 0, filesTotal: total, bytesDone: bytes,
                          bytesTotal: totalBytes, rate: rate, current: current)
    }

    static let table = ProgressTable(title: "push photos", elapsedSeconds: 12, rows: [
        row("thumbs", done: 40, total: 40, bytes: 4 * mib, of: 4 * mib, rate: 2 * Double(mib)),
        row("photos", done: 3, total: 120, bytes: 30 * mib, of: 600 * mib, rate: 10 * Double(mib),
            current: ["DCIM/IMG_0004.JPG", "DCIM/IMG_0005.JPG"]),
        row("videos", done: 0, total: 15, bytes: 0, of: 161 * mib, rate: nil),
    ], offlineNextCheck: nil)

    @Test func wideTerminalShowsEveryColumnAndATotal() {
        let lines = Self.table.lines(width: 120)
        #expect(lines == [
            "push photos  0:12",
            "  thumbs   40/40 files  4.00 MiB / 4.00 MiB  2.00 MiB/s       done",
            "  photos   3/120 files   30.0 MiB / 600 MiB  10.0 MiB/s   ETA 0:57  IMG_0004.JPG, IMG_0005.JPG",
            "  videos    0/15 files        0 B / 161 MiB              ETA --:--",
            "  total   43/175 files   34.0 MiB / 765 MiB  10.0 MiB/s   ETA 1:13  IMG_0004.JPG, IMG_0005.JPG",
        ])
    }

    @Test(arguments: [100, 80, 60, 40, 30, 20, 10])
    func noLineReachesTheLastColumn(width: Int) {
        for line in Self.table.lines(width: width) {
            #expect(line.count <= max(20, width - 1), "\(line.count) > \(width): \(line)")
        }
    }

    @Test func narrowTerminalsDropTheLeastUsefulColumnsFirst() {
        let lines = Self.table.lines(width: 40)
        #expect(lines[2] == "  photos   3/120 files   ETA 0:57")
        let sixty = Self.table.lines(width: 60)
        #expect(sixty[2].contains("30.0 MiB / 600 MiB") && !sixty[2].contains("MiB/s"))
    }

    @Test func offlineSaysWhenTheNextCheckIs() {
        var table = Self.table
        table.offlineNextCheck = 25
        let lines = table.lines(width: 100)
        #expect(lines[0] == "push photos  0:12  offline, next check in 0:25")
        #expect(lines[2].contains("offline") && !lines[2].contains("ETA"))
        #expect(lines[1].contains("done"))
    }

    @Test func finishedQueueKeepsItsAverageRate() {
        var rate = RecentRate(window: 10)
        #expect(rate.record(seconds: 0, bytes: 0, finished: false) == nil)
        #expect(rate.record(seconds: 1, bytes: 100, finished: false) == 100)
        #expect(rate.record(seconds: 2, bytes: 200, finished: true) == 100)
        // Long after, the rate is still the average, not falling toward zero.
        #expect(rate.record(seconds: 60, bytes: 200, finished: true) == 100)
    }

    @Test func rateAfterAnOutageUsesTheRecentWindow() {
        var rate = RecentRate(window: 10)
        _ = rate.record(seconds: 0, bytes: 0, finished: false)
        for second in 1...100 { _ = rate.record(seconds: Double(second), bytes: 0, finished: false) }  // offline
        var shown: Double?
        for second in 101...111 { shown = rate.record(seconds: Double(second), bytes: Int64(second - 100) * 1000, finished: false) }
        #expect(shown == 1000)
    }

    @Test func eraseCountsRowsOfLinesThatWrappedAfterAResize() {
        let lines = [String(repeating: "x", count: 79), "short"]
        let up = "\u{1B}[1A\u{1B}[2K"
        #expect(ProgressDisplay.erase(lines, width: 80) == "\r\u{1B}[2K" + up + up)
        #expect(ProgressDisplay.erase(lines, width: 60) == "\r\u{1B}[2K" + up + up + up)
        #expect(!ProgressDisplay.erase(lines, width: 60).contains("\u{1B}[J"), "a clear to the end of the screen")
    }
}
