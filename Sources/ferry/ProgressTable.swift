/// The live progress table as text for a given terminal width: a title line, one row per
/// queue, a total row when there are several queues. Pure, so it is tested as a table;
/// `ProgressDisplay` only puts its lines on the terminal.
///
/// Every line is at most `width - 1` characters (a line that fills the last column makes
/// some terminals wrap, and a wrapped line breaks the redraw). When the columns do not
/// fit, the least useful ones go first: the current file, then the rate, the byte
/// counts, the ETA; a row is cut only when even the name and file counts do not fit.
struct ProgressTable: Equatable {
    struct Row: Equatable {
        var name: String
        var filesDone: Int
        var filesFailed: Int
        var filesTotal: Int
        var bytesDone: Int64
        var bytesTotal: Int64
        /// Bytes per second: a recent window while running, the average once finished;
        /// nil when there is nothing to say (not started, offline).
        var rate: Double?
        /// Files being moved right now, oldest first.
        var current: [String] = []

        var finished: Bool { filesTotal > 0 && filesDone + filesFailed >= filesTotal }
    }

    var title: String
    var elapsedSeconds: Double
    var rows: [Row]
    /// The remote is offline and is checked again in this many seconds.
    var offlineNextCheck: Double?

    /// The sum of the rows, shown when there are several.
    var total: Row {
        var total = Row(name: "total", filesDone: 0, filesFailed: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0)
        var rate = 0.0, anyRate = false
        for row in rows {
            total.filesDone += row.filesDone
            total.filesFailed += row.filesFailed
            total.filesTotal += row.filesTotal
            total.bytesDone += row.bytesDone
            total.bytesTotal += row.bytesTotal
            if let rowRate = row.rate, !row.finished {
                rate += rowRate
                anyRate = true
            }
        }
        total.rate = anyRate ? rate : nil
        total.current = rows.flatMap(\.current)
        return total
    }

    func lines(width: Int) -> [String] {
        let limit = max(20, width - 1)
        var title = "\(self.title)  \(ByteFormat.duration(elapsedSeconds))"
        if let next = offlineNextCheck {
            // Once the check is due it is under way (up to the connect timeout): "0:00" would stand still.
            title += next < 1 ? "  offline, checking again now" : "  offline, next check in \(ByteFormat.duration(next))"
        }
        let shown = rows.count > 1 ? rows + [total] : rows
        return [Self.fit(title, limit)] + table(shown, limit: limit)
    }

    /// Columns in the order shown.
    private enum Column: CaseIterable {
        case name, files, bytes, rate, eta
    }

    /// Dropped in this order until the rows fit.
    private static let dropOrder: [Column] = [.rate, .bytes, .eta]

    private func cell(_ column: Column, _ row: Row) -> String {
        switch column {
        case .name: return row.name
        case .files:
            let failed = row.filesFailed > 0 ? " (\(row.filesFailed) failed)" : ""
            return "\(row.filesDone)/\(row.filesTotal) files" + failed
        case .bytes: return "\(ByteFormat.string(row.bytesDone)) / \(ByteFormat.string(row.bytesTotal))"
        case .rate: return row.rate.map { ByteFormat.rate($0) } ?? ""
        case .eta:
            if row.finished { return "done" }
            if offlineNextCheck != nil { return "offline" }
            guard let rate = row.rate, rate > 0 else { return "ETA --:--" }
            return "ETA " + ByteFormat.duration(Double(max(0, row.bytesTotal - row.bytesDone)) / rate)
        }
    }

    private func table(_ rows: [Row], limit: Int) -> [String] {
        var columns = Column.allCases
        var widths: [Int] = []
        func measure() -> Int {
            widths = columns.map { column in rows.map { cell(column, $0).count }.max() ?? 0 }
            return 2 + widths.reduce(0, +) + 2 * (columns.count - 1)
        }
        for column in Self.dropOrder where measure() > limit { columns.removeAll { $0 == column } }
        let used = measure()
        return rows.map { row in
            var line = "  "
            for (index, column) in columns.enumerated() {
                let text = cell(column, row)
                let padding = String(repeating: " ", count: widths[index] - text.count)
                if index > 0 { line += "  " }
                line += column == .name ? text + padding : padding + text
            }
            // The current files take what room is left; too little room, no column.
            let room = limit - used - 2
            if !row.current.isEmpty && room >= 12 {
                // Drawn raw (with the table's own terminal sequences): names escaped here.
                let names = row.current.map { TerminalSafeText.escaping(Self.lastComponent($0)) }.joined(separator: ", ")
                line += "  " + Self.fit(names, room)
            }
            return Self.fit(String(line.reversed().drop(while: { $0 == " " }).reversed()), limit)
        }
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Cuts the end off, marking it with an ellipsis.
    static func fit(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(0, limit - 1))) + "…"
    }
}
