import ArgumentParser
import Foundation
import Strata

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
