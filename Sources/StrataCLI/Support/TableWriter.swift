import ArgumentParser
import Foundation
import Strata

/// An aligned table: numbers right-aligned, text left-aligned, long values cut to fit, null as
/// a dim `NULL` on a terminal. Holds the rows until ``finish()`` (to measure the columns), so it
/// shows at most ``maximumRows`` and says how many it left out: a table is for reading, and
/// `--format ndjson` or `--limit` are there for more.
struct TableWriter: RecordWriter {
    let channel: OutputChannel
    private var columns: [String] = []
    private var rows: [[(text: String, isNumber: Bool, isNull: Bool)]] = []
    private var leftOut = 0
    /// The widest a cell may be.
    var maximumCellWidth = 48
    /// The most rows shown.
    var maximumRows = 10_000

    init(channel: OutputChannel) {
        self.channel = channel
    }

    mutating func begin(columns: [String]) throws {
        self.columns = columns
    }

    mutating func write(_ values: [AttributeValue?]) throws {
        guard rows.count < maximumRows else {
            leftOut += 1
            return
        }
        rows.append(
            values.map { value in
                guard let value, let text = ValueText.text(value) else { return ("NULL", false, true) }
                let isNumber: Bool =
                    switch value {
                    case .integer, .double, .float, .decimal: true
                    default: false
                    }
                return (Self.oneLine(text, width: maximumCellWidth), isNumber, false)
            })
    }

    mutating func finish() throws {
        let widths = columns.indices.map { column in
            max(columns[column].count, rows.map { $0[column].text.count }.max() ?? 0)
        }
        func line(_ cells: [String], styles: [OutputChannel.Style?], rightAligned: [Bool]) -> String {
            cells.indices.map { index in
                let padding = String(repeating: " ", count: widths[index] - cells[index].count)
                let cell = styles[index].map { channel.styled(cells[index], $0) } ?? cells[index]
                return rightAligned[index] ? padding + cell : cell + padding
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let numeric = columns.indices.map { column in
            !rows.isEmpty && rows.allSatisfy { $0[column].isNumber || $0[column].isNull }
        }
        try channel.writeLine(
            line(columns, styles: Array(repeating: .bold, count: columns.count), rightAligned: numeric))
        try channel.writeLine(widths.map { String(repeating: "─", count: $0) }.joined(separator: "  "))
        for row in rows {
            try channel.writeLine(
                line(row.map(\.text), styles: row.map { $0.isNull ? .dim : nil }, rightAligned: numeric))
        }
        if leftOut > 0 {
            try channel.writeLine(
                channel.styled(
                    "… and \(ProgressBar.grouped(leftOut)) more row\(leftOut == 1 ? "" : "s") not shown; narrow the query with --where or --limit, or print every row with --format ndjson.",
                    .dim))
        }
        try channel.flush()
    }

    /// `text` on one line, cut to `width` characters with an ellipsis.
    static func oneLine(_ text: String, width: Int) -> String {
        var line = text.replacingOccurrences(of: "\r\n", with: "⏎").replacingOccurrences(of: "\n", with: "⏎")
            .replacingOccurrences(of: "\t", with: " ")
        if line.count > width { line = String(line.prefix(width - 1)) + "…" }
        return line
    }
}
