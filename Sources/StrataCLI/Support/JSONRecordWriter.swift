import ArgumentParser
import Foundation
import Strata

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
