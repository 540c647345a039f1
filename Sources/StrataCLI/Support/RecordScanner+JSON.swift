import Foundation

extension RecordScanner {
    // MARK: JSON

    /// The next object of the top-level array.
    mutating func nextInArray() throws -> ImportedRecord? {
        switch state {
        case .finished:
            return nil
        case .start:
            state = .finished
            try skipWhitespace()
            guard try peek() == .openBracket else {
                throw unexpected("a JSON file to import must be an array of records", expected: "'['")
            }
            position += 1
            try skipWhitespace()
            if try peek() == .closeBracket {
                position += 1
                try finishArray()
                return nil
            }
        case .inRecords:
            state = .finished
            try skipWhitespace()
            switch try peek() {
            case .comma:
                position += 1
                try skipWhitespace()
            case .closeBracket:
                position += 1
                try finishArray()
                return nil
            default:
                throw unexpected("missing ',' between records or ']' after the last", expected: "',' or ']'")
            }
        }
        guard try peek() == .openBrace else {
            throw unexpected("each record must be a JSON object", expected: "'{'")
        }
        let record = try readObject(newlines: true)
        state = .inRecords
        return record
    }

    /// Checks that only whitespace follows the array.
    private mutating func finishArray() throws {
        try skipWhitespace()
        if try peek() != nil {
            throw unexpected("text after the end of the array", expected: "the end of the file")
        }
    }

    /// The next object of an NDJSON file.
    mutating func nextLine() throws -> ImportedRecord? {
        if state == .finished { return nil }
        state = .finished
        // Blank lines between records are skipped.
        try skipWhitespace()
        guard let byte = try peek() else { return nil }
        guard byte == .openBrace else {
            throw unexpected("each line must be one JSON object", expected: "'{'")
        }
        let record = try readObject(newlines: false)
        try skipWhitespace(newlines: false)
        switch try peek() {
        case nil: break
        case .lineFeed:
            position += 1
            line += 1
        default:
            throw unexpected("text after the record on its line", expected: "a line break")
        }
        state = .inRecords
        return record
    }

    /// Reads the object at `{` as a record.
    private mutating func readObject(newlines: Bool) throws -> ImportedRecord {
        let startLine = line
        position += 1
        var fields: [(name: String, value: ImportedField)] = []
        fields.reserveCapacity(knownNames.count)
        try skipWhitespace(newlines: newlines)
        if try peek() == .closeBrace {
            position += 1
            return ImportedRecord(fields: fields, line: startLine)
        }
        while true {
            guard try peek() == .quote else {
                throw unexpected("a field name must be a string in double quotes", expected: "'\"'")
            }
            position += 1
            let name = try readName(at: fields.count)
            if Self.contains(fields, name) {
                throw failure("the field \"\(name)\" appears twice in the record")
            }
            try skipWhitespace(newlines: newlines)
            guard try peek() == .colon else {
                throw unexpected("missing ':' after the field name \"\(name)\"", expected: "':'")
            }
            position += 1
            try skipWhitespace(newlines: newlines)
            let value = try readValue(newlines: newlines)
            fields.append((name, value))
            try skipWhitespace(newlines: newlines)
            switch try peek() {
            case .comma:
                position += 1
                try skipWhitespace(newlines: newlines)
            case .closeBrace:
                position += 1
                return ImportedRecord(fields: fields, line: startLine)
            default:
                throw unexpected("missing ',' or '}' after the field \"\(name)\"", expected: "',' or '}'")
            }
        }
    }

    /// Whether `fields` has one named `name`.
    private static func contains(_ fields: [(name: String, value: ImportedField)], _ name: String) -> Bool {
        // Records are mostly narrow; a set pays off only for wide ones.
        if fields.count < 32 { return fields.contains { $0.name == name } }
        return Set(fields.lazy.map(\.name)).contains(name)
    }

    /// The field name after its opening quote, reusing the name the last record had at `index`.
    private mutating func readName(at index: Int) throws -> String {
        try readString(decoding: true)
        if index < knownNames.count, knownNames[index].bytes == scratch { return knownNames[index].name }
        let name = try makeString(scratch, what: "a field name")
        if index < knownNames.count {
            knownNames[index] = (scratch, name)
        } else if index == knownNames.count {
            knownNames.append((scratch, name))
        }
        return name
    }

    /// A field's value, at its first byte.
    private mutating func readValue(newlines: Bool) throws -> ImportedField {
        // The end of the input reads as 0, which no case takes.
        switch try peek() ?? 0 {
        case .quote:
            position += 1
            try readString(decoding: true)
            return .string(try makeString(scratch, what: "a string"))
        case .openBrace, .openBracket:
            let startLine = line
            captured.removeAll(keepingCapacity: true)
            captureStart = position
            isCapturing = true
            defer { isCapturing = false }
            try skipContainer(depth: 1, newlines: newlines)
            captured.append(contentsOf: buffer[captureStart..<position])
            return .json(try makeString(captured, what: "a nested value", line: startLine))
        case UInt8(ascii: "t"):
            try expectWord(Self.trueWord)
            return .boolean(true)
        case UInt8(ascii: "f"):
            try expectWord(Self.falseWord)
            return .boolean(false)
        case UInt8(ascii: "n"):
            try expectWord(Self.nullWord)
            return .null
        case .minus, UInt8.digitZero...UInt8.digitNine:
            try readNumber(keeping: true)
            // Only ASCII digits, signs, points and exponents were kept.
            return .number(String(decoding: scratch, as: UTF8.self))
        default:
            throw unexpected("missing value", expected: "a string, number, true, false, null, object or array")
        }
    }

    /// Checks a nested value without building it (its text is captured instead).
    private mutating func skipValue(depth: Int, newlines: Bool) throws {
        switch try peek() ?? 0 {
        case .quote:
            position += 1
            try readString(decoding: false)
        case .openBrace, .openBracket: try skipContainer(depth: depth + 1, newlines: newlines)
        case UInt8(ascii: "t"): try expectWord(Self.trueWord)
        case UInt8(ascii: "f"): try expectWord(Self.falseWord)
        case UInt8(ascii: "n"): try expectWord(Self.nullWord)
        case .minus, UInt8.digitZero...UInt8.digitNine: try readNumber(keeping: false)
        default:
            throw unexpected("missing value", expected: "a string, number, true, false, null, object or array")
        }
    }

    /// Checks the object or array at `{` or `[`.
    private mutating func skipContainer(depth: Int, newlines: Bool) throws {
        guard depth <= Self.maximumDepth else {
            throw failure("values are nested more than \(Self.maximumDepth) levels deep")
        }
        let isObject = buffer[position] == .openBrace
        let close: UInt8 = isObject ? .closeBrace : .closeBracket
        position += 1
        try skipWhitespace(newlines: newlines)
        if try peek() == close {
            position += 1
            return
        }
        while true {
            if isObject {
                guard try peek() == .quote else {
                    throw unexpected("a field name must be a string in double quotes", expected: "'\"'")
                }
                position += 1
                try readString(decoding: false)
                try skipWhitespace(newlines: newlines)
                guard try peek() == .colon else { throw unexpected("missing ':' after a field name", expected: "':'") }
                position += 1
                try skipWhitespace(newlines: newlines)
            }
            try skipValue(depth: depth, newlines: newlines)
            try skipWhitespace(newlines: newlines)
            switch try peek() ?? 0 {
            case .comma:
                position += 1
                try skipWhitespace(newlines: newlines)
            case close:
                position += 1
                return
            default:
                let expected = isObject ? "',' or '}'" : "',' or ']'"
                throw unexpected(
                    isObject ? "missing ',' or '}' in an object" : "missing ',' or ']' in an array", expected: expected)
            }
        }
    }

    private static let trueWord = Array("true".utf8)
    private static let falseWord = Array("false".utf8)
    private static let nullWord = Array("null".utf8)

    private mutating func expectWord(_ word: [UInt8]) throws {
        for byte in word {
            guard try peek() == byte else {
                throw unexpected("not a JSON value", expected: "'\(String(decoding: word, as: UTF8.self))'")
            }
            position += 1
        }
    }

    /// Reads a JSON number (RFC 8259's grammar), keeping its text in `scratch` when `keeping`.
    private mutating func readNumber(keeping: Bool) throws {
        if keeping { scratch.removeAll(keepingCapacity: true) }
        if try peek() == .minus { take(keeping) }
        guard let first = try peek(), first.isDigit else {
            throw unexpected("a number must have digits", expected: "a digit")
        }
        take(keeping)
        // A leading zero stands alone: `01` is not a number.
        if first != .digitZero { try takeDigits(keeping) }
        if try peek() == .point {
            take(keeping)
            guard try peek()?.isDigit == true else {
                throw unexpected("a number needs digits after its decimal point", expected: "a digit")
            }
            try takeDigits(keeping)
        }
        if let byte = try peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            take(keeping)
            if let sign = try peek(), sign == .plus || sign == .minus { take(keeping) }
            guard try peek()?.isDigit == true else {
                throw unexpected("a number needs digits in its exponent", expected: "a digit")
            }
            try takeDigits(keeping)
        }
    }

    @inline(__always)
    private mutating func take(_ keeping: Bool) {
        if keeping { scratch.append(buffer[position]) }
        position += 1
    }

    private mutating func takeDigits(_ keeping: Bool) throws {
        while let byte = try peek(), byte.isDigit { take(keeping) }
    }

    /// Reads a JSON string after its opening quote, unescaping it into `scratch` when
    /// `decoding` (and only checking it otherwise).
    private mutating func readString(decoding: Bool) throws {
        if decoding { scratch.removeAll(keepingCapacity: true) }
        while true {
            if position == end, try !refill() {
                throw failure("the string is not closed (expected '\"', found the end of the file)")
            }
            // The plain run up to the next quote, backslash or control character, at once.
            let start = position
            let end = end
            let stop = buffer.withUnsafeBufferPointer { bytes in
                var index = start
                while index < end {
                    let byte = bytes[index]
                    if byte == .quote || byte == .backslash || byte < 0x20 { break }
                    index += 1
                }
                return index
            }
            if decoding { scratch.append(contentsOf: buffer[start..<stop]) }
            position = stop
            guard stop < end else { continue }
            let byte = buffer[stop]
            position += 1
            if byte == .quote { return }
            if byte < 0x20 {
                position -= 1
                throw unexpected(
                    "a control character inside a string", expected: "an escape such as \\n or \\t, or '\"'")
            }
            try readEscape(decoding: decoding)
        }
    }

    /// Reads the escape after a backslash.
    private mutating func readEscape(decoding: Bool) throws {
        guard let byte = try peek() else {
            throw failure("the string is not closed (expected an escape after '\\', found the end of the file)")
        }
        let unescaped: UInt8
        switch byte {
        case .quote, .backslash, .slash: unescaped = byte
        case UInt8(ascii: "b"): unescaped = 0x08
        case UInt8(ascii: "f"): unescaped = 0x0C
        case UInt8(ascii: "n"): unescaped = .lineFeed
        case UInt8(ascii: "r"): unescaped = .carriageReturn
        case UInt8(ascii: "t"): unescaped = .tab
        case UInt8(ascii: "u"):
            position += 1
            var value = try readHexadecimalUnit()
            if (0xD800...0xDBFF).contains(value) {
                // A high surrogate must be followed by a low one; the pair is one character.
                guard try peek() == .backslash else {
                    throw unexpected("a lone high surrogate in a \\u escape", expected: "'\\u' and a low surrogate")
                }
                position += 1
                guard try peek() == UInt8(ascii: "u") else {
                    throw unexpected("a lone high surrogate in a \\u escape", expected: "'\\u' and a low surrogate")
                }
                position += 1
                let low = try readHexadecimalUnit()
                guard (0xDC00...0xDFFF).contains(low) else {
                    let hex = String(low, radix: 16, uppercase: true)
                    throw failure("a high surrogate followed by \\u\(hex) (expected a low surrogate DC00 to DFFF)")
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(value) {
                let hex = String(value, radix: 16, uppercase: true)
                throw failure("a lone low surrogate \\u\(hex) (expected a high surrogate D800 to DBFF before it)")
            }
            if decoding { Self.appendUTF8(value, to: &scratch) }
            return
        default:
            throw unexpected("an unknown escape in a string", expected: "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u")
        }
        if decoding { scratch.append(unescaped) }
        position += 1
    }

    /// The four hexadecimal digits of a `\u` escape.
    private mutating func readHexadecimalUnit() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = try peek(), let digit = byte.hexadecimalValue else {
                throw unexpected("a \\u escape needs four hexadecimal digits", expected: "a hexadecimal digit")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Appends the UTF-8 encoding of the scalar `value` (not a surrogate).
    private static func appendUTF8(_ value: UInt32, to bytes: inout [UInt8]) {
        switch value {
        case ..<0x80:
            bytes.append(UInt8(value))
        case ..<0x800:
            bytes.append(UInt8(0xC0 | value >> 6))
            bytes.append(UInt8(0x80 | value & 0x3F))
        case ..<0x10000:
            bytes.append(UInt8(0xE0 | value >> 12))
            bytes.append(UInt8(0x80 | value >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | value >> 18))
            bytes.append(UInt8(0x80 | value >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | value >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        }
    }
}
