import Foundation

extension RecordScanner {
    // MARK: CSV

    /// The next row of a CSV file, named by the header.
    mutating func nextRow() throws -> ImportedRecord? {
        if state == .finished { return nil }
        if state == .start {
            state = .finished
            let headerLine = line
            guard let names = try readRow() else { return nil }
            header = []
            for (index, field) in names.enumerated() {
                guard case .text(let name) = field, !name.isEmpty else {
                    throw failure("column \(index + 1) of the header has no name", line: headerLine)
                }
                guard !header.contains(name) else {
                    throw failure("the header names the column \"\(name)\" twice", line: headerLine)
                }
                header.append(name)
            }
            state = .inRecords
        }
        while true {
            let rowLine = line
            state = .finished
            guard let row = try readRow() else { return nil }
            state = .inRecords
            // An empty line holds no fields, except in a one-column file, where it is a null.
            if row.count == 1, row[0] == .null, header.count != 1 { continue }
            guard row.count == header.count else {
                throw failure(
                    "the row has \(row.count) field\(row.count == 1 ? "" : "s") but the header names \(header.count) "
                        + "(expected \(header.count) fields, found \(row.count))",
                    line: rowLine)
            }
            var fields: [(name: String, value: ImportedField)] = []
            fields.reserveCapacity(row.count)
            for (name, value) in zip(header, row) { fields.append((name, value)) }
            return ImportedRecord(fields: fields, line: rowLine)
        }
    }

    /// The fields of the next line, or `nil` at the end of the file.
    private mutating func readRow() throws -> [ImportedField]? {
        guard try peek() != nil else { return nil }
        var fields: [ImportedField] = []
        fields.reserveCapacity(header.count)
        while true {
            if try peek() == .quote {
                position += 1
                try readQuotedField()
                let text = try makeString(scratch, what: "a field")
                fields.append(.text(text))
                switch try peek() {
                case .comma:
                    position += 1
                    continue
                case nil, .lineFeed, .carriageReturn:
                    break
                default:
                    throw unexpected("text after a field's closing quote", expected: "',' or the end of the line")
                }
            } else {
                try readUnquotedField()
                if scratch.isEmpty {
                    fields.append(.null)
                } else {
                    let text = try makeString(scratch, what: "a field")
                    fields.append(.text(text))
                }
                if try peek() == .comma {
                    position += 1
                    continue
                }
            }
            // The end of the line (LF or CRLF) or of the file.
            if try peek() == .carriageReturn {
                position += 1
                guard try peek() == .lineFeed else {
                    throw unexpected("a carriage return not followed by a line feed", expected: "a line break")
                }
            }
            if try peek() == .lineFeed {
                position += 1
                line += 1
            }
            return fields
        }
    }

    /// Reads a quoted field after its opening quote into `scratch`, up to and past its closing
    /// quote.
    private mutating func readQuotedField() throws {
        scratch.removeAll(keepingCapacity: true)
        let startLine = line
        while true {
            if position == end, try !refill() {
                throw failure(
                    "a quoted field is not closed (expected '\"', found the end of the file)", line: startLine)
            }
            let start = position
            let end = end
            var lineBreaks = 0
            let stop = buffer.withUnsafeBufferPointer { bytes in
                var index = start
                while index < end {
                    let byte = bytes[index]
                    if byte == .quote { break }
                    if byte == .lineFeed { lineBreaks += 1 }
                    index += 1
                }
                return index
            }
            scratch.append(contentsOf: buffer[start..<stop])
            line += lineBreaks
            position = stop
            guard stop < end else { continue }
            position += 1
            // `""` is a quote inside the field; a lone quote closes it.
            guard try peek() == .quote else { return }
            scratch.append(.quote)
            position += 1
        }
    }

    /// Reads an unquoted field into `scratch`, up to its comma or line end.
    private mutating func readUnquotedField() throws {
        scratch.removeAll(keepingCapacity: true)
        while true {
            if position == end, try !refill() { return }
            let start = position
            let end = end
            let stop = buffer.withUnsafeBufferPointer { bytes in
                var index = start
                while index < end {
                    let byte = bytes[index]
                    if byte == .comma || byte == .lineFeed || byte == .carriageReturn || byte == .quote { break }
                    index += 1
                }
                return index
            }
            scratch.append(contentsOf: buffer[start..<stop])
            position = stop
            guard stop < end else { continue }
            if buffer[stop] == .quote {
                throw unexpected(
                    "a quote inside an unquoted field; quote the whole field and double its quotes",
                    expected: "',' or the end of the line")
            }
            return
        }
    }
}
