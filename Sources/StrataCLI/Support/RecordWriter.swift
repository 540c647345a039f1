import ArgumentParser
import Foundation
import Strata

/// The formats rows can be written in.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// An aligned table, for people.
    case table
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// Comma-separated values with a header line (RFC 4180).
    case csv

    /// The format to use: the one asked for, else a table on a terminal and NDJSON elsewhere.
    static func resolve(_ format: OutputFormat?, json: Bool, csv: Bool, for channel: OutputChannel) -> OutputFormat {
        if let format { return format }
        if json { return .json }
        if csv { return .csv }
        return channel.isTerminal ? .table : .ndjson
    }

    /// A writer of this format on `channel`.
    func makeWriter(on channel: OutputChannel) -> any RecordWriter {
        switch self {
        case .table: TableWriter(channel: channel)
        case .json: JSONRecordWriter(channel: channel, asArray: true)
        case .ndjson: JSONRecordWriter(channel: channel, asArray: false)
        case .csv: CSVRecordWriter(channel: channel)
        }
    }
}

/// Writes rows of named values in one format.
protocol RecordWriter {
    /// Starts the output with the names of the columns.
    mutating func begin(columns: [String]) throws
    /// Writes one row, a value per column (`nil` leaves a column out of that row's JSON).
    mutating func write(_ values: [AttributeValue?]) throws
    /// Ends the output.
    mutating func finish() throws
}

/// JSON: an array of objects, or one object per line (NDJSON).
struct JSONRecordWriter: RecordWriter {
    let channel: OutputChannel
    let asArray: Bool
    private var keys: [[UInt8]] = []
    private var rowCount = 0
    private var bytes: [UInt8] = []

    init(channel: OutputChannel, asArray: Bool) {
        self.channel = channel
        self.asArray = asArray
        bytes.reserveCapacity(512)
    }

    mutating func begin(columns: [String]) throws {
        keys = columns.map { name in
            var key: [UInt8] = []
            ValueText.appendJSONString(name, to: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
        if asArray { try channel.write("[") }
    }

    mutating func write(_ values: [AttributeValue?]) throws {
        bytes.removeAll(keepingCapacity: true)
        if asArray { bytes.append(contentsOf: (rowCount == 0 ? "\n" : ",\n").utf8) }
        appendObject(values, to: &bytes)
        if !asArray { bytes.append(UInt8(ascii: "\n")) }
        try channel.write(bytes: bytes)
        rowCount += 1
    }

    /// Appends one row as a JSON object, leaving out the columns whose value is `nil`.
    func appendObject(_ values: [AttributeValue?], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in zip(keys, values) {
            guard let value else { continue }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(contentsOf: key)
            ValueText.appendJSON(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func finish() throws {
        if asArray { try channel.write(rowCount == 0 ? "]\n" : "\n]\n") }
        try channel.flush()
    }
}

/// CSV (RFC 4180): a header line, then one line per row. Fields holding a comma, quote or line
/// break are quoted; null is an empty field, an empty string a quoted one (`""`).
struct CSVRecordWriter: RecordWriter {
    let channel: OutputChannel
    private var bytes: [UInt8] = []

    init(channel: OutputChannel) {
        self.channel = channel
    }

    mutating func begin(columns: [String]) throws {
        try channel.write(columns.map { Self.field($0) }.joined(separator: ",") + "\r\n")
    }

    mutating func write(_ values: [AttributeValue?]) throws {
        bytes.removeAll(keepingCapacity: true)
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value, let text = ValueText.text(value) else { continue }
            bytes.append(contentsOf: Self.field(text).utf8)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        try channel.write(bytes: bytes)
    }

    mutating func finish() throws {
        try channel.flush()
    }

    static func field(_ text: String) -> String {
        guard text.isEmpty || text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

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
