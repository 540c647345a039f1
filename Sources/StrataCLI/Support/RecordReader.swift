import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One field of an imported record, as the file wrote it.
///
/// JSON says what kind of value a field holds, so its fields keep that kind (and a number its
/// exact digits); CSV does not, so its fields are ``text(_:)`` and take their type from the
/// attribute they are imported into (``ImportedValues/attributeValue(_:for:line:)``).
enum ImportedField: Equatable, Sendable {
    /// JSON `null`, or an unquoted empty CSV field.
    case null
    /// JSON `true` or `false`.
    case boolean(Bool)
    /// A JSON number's exact literal text (`0.1000000000000000055511151231257827`, `3e2`).
    case number(String)
    /// A JSON string, unescaped (`\uXXXX` escapes included, surrogate pairs joined).
    case string(String)
    /// A CSV field: typed later from the attribute's type. A quoted empty field is `text("")`.
    case text(String)
    /// A nested JSON array or object, as its raw text (whitespace included).
    case json(String)
}

/// One record: its fields in file order, and where it starts, for messages.
struct ImportedRecord: Sendable {
    /// The record's fields, in the order the file wrote them.
    var fields: [(name: String, value: ImportedField)]
    /// The 1-based line the record starts on.
    var line: Int
}

/// The formats `strata import` reads: the ones `strata query` writes, except the table.
enum ImportFormat: String, CaseIterable, Sendable {
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// Comma-separated values with a header line (RFC 4180).
    case csv
}

/// Reads records from a JSON, NDJSON or CSV file one at a time, in memory that does not grow
/// with the file.
///
/// The file is read in chunks (256 KiB by default) and parsed incrementally, so a file of
/// millions of records needs no more memory than its largest record. Numbers keep their literal
/// text, so that decimals import exactly.
///
/// ```swift
/// let reader = try RecordReader(path: "movies.ndjson", format: .ndjson)
/// while let record = try reader.next() {
///     for (name, field) in record.fields { … }
///     progress.update(phase: "Importing", completed: reader.bytesRead, total: reader.fileSize ?? 0)
/// }
/// ```
///
/// Formats:
/// - `json`: a top-level array of objects, whitespace anywhere.
/// - `ndjson`: one object per line; blank lines are skipped; an object may not span lines.
/// - `csv`: RFC 4180 with a header line naming the fields; an unquoted empty field is null, a
///   quoted one (`""`) the empty string; LF or CRLF line ends. An empty line is skipped, except
///   in a one-column file, where it is a null (that is how a one-column export writes null).
///
/// Any format may start with a UTF-8 byte order mark. Text must be valid UTF-8.
///
/// A reader is used from one thread at a time and closes its file when released.
final class RecordReader {
    /// The size of the chunks read from the file when none is given.
    static let defaultChunkSize = 256 * 1024

    /// The file's size in bytes, or `nil` for standard input (and anything but a regular file).
    let fileSize: Int?
    private var scanner: RecordScanner
    private let descriptor: Int32
    private let closesDescriptor: Bool

    /// Opens `path` (`"-"` for standard input) to read records in `format`.
    ///
    /// - Parameters:
    ///   - path: The file to read, or `"-"` for standard input.
    ///   - format: The file's format.
    ///   - chunkSize: How many bytes each read asks for (tests make it tiny, to put chunk
    ///     boundaries everywhere).
    /// - Throws: ``CommandFailure`` when the file does not exist, is a directory or cannot be
    ///   read.
    convenience init(path: String, format: ImportFormat, chunkSize: Int = RecordReader.defaultChunkSize) throws {
        if path == "-" {
            try self.init(
                descriptor: STDIN_FILENO, closesDescriptor: false, name: "standard input", format: format,
                chunkSize: chunkSize, reportsSize: false)
            return
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw CommandFailure("\(path) does not exist; name the file to import.")
            case EACCES: throw CommandFailure("Cannot read \(path): permission denied.")
            default: throw CommandFailure("Cannot read \(path): \(String(cString: strerror(code))).")
            }
        }
        try self.init(
            descriptor: descriptor, closesDescriptor: true, name: path, format: format, chunkSize: chunkSize,
            reportsSize: true)
    }

    /// Reads records from an open descriptor (a pipe, say), named `name` in messages.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to read.
    ///   - closesDescriptor: Whether the reader closes `descriptor` when released (or when
    ///     this initializer throws).
    ///   - name: The input's name in messages.
    ///   - format: The input's format.
    ///   - chunkSize: How many bytes each read asks for.
    ///   - reportsSize: Whether ``fileSize`` reports the size of a regular file.
    /// - Throws: ``CommandFailure`` when `descriptor` is a directory or cannot be examined.
    init(
        descriptor: Int32, closesDescriptor: Bool, name: String, format: ImportFormat,
        chunkSize: Int = RecordReader.defaultChunkSize, reportsSize: Bool = false
    ) throws {
        var status = stat()
        // `open` succeeds on a directory; reading it would fail with a less helpful message.
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            if closesDescriptor { close(descriptor) }
            throw CommandFailure("Cannot read \(name): \(reason).")
        }
        let kind = status.st_mode & S_IFMT
        guard kind != S_IFDIR else {
            if closesDescriptor { close(descriptor) }
            throw CommandFailure("\(name) is a directory; name a file to import.")
        }
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
        fileSize = reportsSize && kind == S_IFREG ? Int(status.st_size) : nil
        scanner = RecordScanner(descriptor: descriptor, name: name, format: format, chunkSize: chunkSize)
    }

    deinit {
        if closesDescriptor { close(descriptor) }
    }

    /// The next record, or `nil` at the end of the file.
    ///
    /// After a failure the reader is finished: later calls return `nil`.
    ///
    /// - Throws: ``CommandFailure`` for malformed input, with the file's name and line:
    ///   `movies.json:12: missing ',' between fields (expected ',' or '}', found '"')`; or when
    ///   the file cannot be read.
    func next() throws -> ImportedRecord? {
        try scanner.next()
    }

    /// How many bytes have been read from the file so far, for a progress bar.
    var bytesRead: Int { scanner.bytesRead }
}

@available(*, unavailable, message: "A RecordReader is used from one thread at a time")
extension RecordReader: Sendable {}

// MARK: - The scanner

/// The reader's state and parsers: a buffer of the current chunk, where the parser is in it,
/// and the line.
///
/// A struct held by ``RecordReader`` so that the byte loops touch their state without the
/// class's dynamic exclusivity checks.
private struct RecordScanner {
    let descriptor: Int32
    /// The input's name in messages.
    let name: String
    let format: ImportFormat
    let chunkSize: Int

    private(set) var bytesRead = 0
    private var buffer: [UInt8]
    private var position = 0
    private var end = 0
    private var reachedEnd = false
    /// The current 1-based line.
    private var line = 1

    /// Raw text of a nested JSON value: bytes of chunks already left behind, then
    /// `buffer[captureStart..<position]` of the current one.
    private var isCapturing = false
    private var captureStart = 0
    private var captured: [UInt8] = []

    /// Decoded bytes of the string or number being read.
    private var scratch: [UInt8] = []

    private enum State { case start, inRecords, finished }
    private var state = State.start
    /// The names of the last record's fields by position, with their bytes: records of one
    /// file mostly repeat their names, which then cost a comparison instead of a new string.
    private var knownNames: [(bytes: [UInt8], name: String)] = []
    /// The CSV header's names.
    private var header: [String] = []

    /// Deeper nesting than this is refused rather than risking the stack.
    private static let maximumDepth = 256

    init(descriptor: Int32, name: String, format: ImportFormat, chunkSize: Int) {
        self.descriptor = descriptor
        self.name = name
        self.format = format
        self.chunkSize = max(1, chunkSize)
        // Room for a byte order mark even when the chunks are tiny.
        buffer = [UInt8](repeating: 0, count: max(self.chunkSize, 4))
        scratch.reserveCapacity(256)
    }

    mutating func next() throws -> ImportedRecord? {
        if state == .start { try skipByteOrderMark() }
        switch format {
        case .json: return try nextInArray()
        case .ndjson: return try nextLine()
        case .csv: return try nextRow()
        }
    }

    // MARK: Input

    /// The next byte, or `nil` at the end of the input; reads a chunk when the buffer is used up.
    @inline(__always)
    private mutating func peek() throws -> UInt8? {
        if position < end { return buffer[position] }
        return try refill() ? buffer[position] : nil
    }

    /// Replaces the buffer with the next chunk; `false` at the end of the input.
    private mutating func refill() throws -> Bool {
        if reachedEnd { return false }
        if isCapturing {
            captured.append(contentsOf: buffer[captureStart..<end])
            captureStart = 0
        }
        position = 0
        end = 0
        let count = try read(at: 0)
        if count == 0 {
            reachedEnd = true
            return false
        }
        end = count
        return true
    }

    /// Reads up to a chunk into `buffer[offset...]`; the number of bytes read, 0 at the end.
    private mutating func read(at offset: Int) throws -> Int {
        let length = min(chunkSize, buffer.count - offset)
        let descriptor = descriptor
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                #if canImport(Glibc)
                    return Glibc.read(descriptor, base + offset, length)
                #else
                    return Darwin.read(descriptor, base + offset, length)
                #endif
            }
            if count >= 0 {
                bytesRead += count
                return count
            }
            if errno == EINTR { continue }
            throw CommandFailure("Cannot read \(name): \(String(cString: strerror(errno))).")
        }
    }

    private mutating func skipByteOrderMark() throws {
        // The mark is three bytes; a tiny chunk size must not split it.
        while end < 3, !reachedEnd {
            let count = try read(at: end)
            if count == 0 { reachedEnd = true } else { end += count }
        }
        if end >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }
    }

    /// Skips JSON whitespace; line breaks too unless `newlines` is `false` (inside an NDJSON
    /// record, where a line break ends the record).
    private mutating func skipWhitespace(newlines: Bool = true) throws {
        while let byte = try peek() {
            switch byte {
            case .space, .tab, .carriageReturn: position += 1
            case .lineFeed where newlines:
                position += 1
                line += 1
            default: return
            }
        }
    }

    // MARK: Messages

    /// A failure at `line` (the current one by default): `FILE:LINE: problem`.
    private func failure(_ problem: String, line: Int? = nil) -> CommandFailure {
        CommandFailure("\(name):\(line ?? self.line): \(problem)")
    }

    /// A failure at the current byte: `FILE:LINE: problem (expected X, found Y)`.
    private mutating func unexpected(_ problem: String, expected: String) -> CommandFailure {
        failure("\(problem) (expected \(expected), found \(describeNext()))")
    }

    /// The next byte, or the character it starts, for messages.
    private mutating func describeNext() -> String {
        guard let byte = try? peek() else { return "the end of the file" }
        switch byte {
        case .lineFeed: return "a line break"
        case .carriageReturn: return "a carriage return"
        case .tab: return "a tab"
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0xC0...0xF4:
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            if position + length <= end,
                let text = String(validating: buffer[position..<(position + length)], as: UTF8.self)
            {
                return "'\(text)'"
            }
        default: break
        }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    /// `bytes` as a string, or a failure if they are not UTF-8.
    private func makeString(_ bytes: [UInt8], what: String, line: Int? = nil) throws -> String {
        // Most text is ASCII, checked in one pass far faster than the general validation.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw failure("\(what) is not valid UTF-8; convert the file to UTF-8", line: line)
        }
        return text
    }

    // MARK: JSON

    /// The next object of the top-level array.
    private mutating func nextInArray() throws -> ImportedRecord? {
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
    private mutating func nextLine() throws -> ImportedRecord? {
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

    // MARK: CSV

    /// The next row of a CSV file, named by the header.
    private mutating func nextRow() throws -> ImportedRecord? {
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

extension UInt8 {
    fileprivate static let tab: UInt8 = 0x09
    fileprivate static let lineFeed: UInt8 = 0x0A
    fileprivate static let carriageReturn: UInt8 = 0x0D
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let point = UInt8(ascii: ".")
    fileprivate static let plus = UInt8(ascii: "+")
    fileprivate static let minus = UInt8(ascii: "-")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let digitZero = UInt8(ascii: "0")
    fileprivate static let digitNine = UInt8(ascii: "9")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let closeBracket = UInt8(ascii: "]")

    fileprivate var isDigit: Bool { self >= .digitZero && self <= .digitNine }

    fileprivate var hexadecimalValue: UInt8? {
        switch self {
        case UInt8.digitZero...UInt8.digitNine: self - .digitZero
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

// MARK: - Typed values

/// The conversion of imported fields to attribute values, checked against the attribute's type.
///
/// Each type reads the encoding `strata query` writes (see ``ValueText``), so that an export
/// imports back to identical values:
///
/// | Type | From JSON | From CSV text |
/// |---|---|---|
/// | Integer 16/32/64 | an integral number within the type's range (`3`, `3.0`, `3e2`) | the same |
/// | Double, Float | a number; the strings `NaN`, `Infinity`, `-Infinity` | the same |
/// | Decimal | a number, exactly (at most 38 significant digits) | the same |
/// | String | a string | the text |
/// | Boolean | `true`, `false` | `true`/`false`/`1`/`0`/`yes`/`no`, any case |
/// | Date | an ISO 8601 string, read exactly (or text in the `--date-format` pattern) | the same |
/// | Binary | a Base64 string | the same |
/// | UUID, URI | a string (a URI needs a scheme) | the same |
/// | Codable | any value, as JSON text | text that is JSON |
///
/// Numeric and Boolean attributes also accept their text in a JSON string (`"42"`, `"true"`),
/// as tools write 64-bit integers that JavaScript cannot hold. Spaces and tabs around a value
/// are ignored for every type but String and Codable. Null is ``AttributeValue/null`` for every type:
/// whether the attribute may be null is the caller's question.
enum ImportedValues {
    /// A field that does not fit its attribute's type.
    struct Mismatch: Error {
        /// What the attribute takes: `an integer from -32768 to 32767`.
        var expected: String
    }

    /// The value of `field` for `attribute`, checked against the attribute's type, with dates
    /// in ISO 8601.
    ///
    /// - Parameters:
    ///   - field: The field as the file wrote it.
    ///   - attribute: The attribute it is imported into.
    ///   - line: The record's line, for messages.
    /// - Returns: A value that matches the attribute's type, or ``AttributeValue/null``.
    /// - Throws: ``CommandFailure`` naming the line, the attribute and what was expected:
    ///   `line 12: attribute "count" (Integer 16): expected an integer from -32768 to 32767, found 40000`.
    static func attributeValue(_ field: ImportedField, for attribute: AttributeDescription, line: Int) throws
        -> AttributeValue
    {
        do {
            return try attributeValue(field, for: attribute, dates: ImportedDateFormat())
        } catch {
            throw CommandFailure(
                "line \(line): attribute \"\(attribute.name)\" (\(attribute.type.xcodeName)): expected \(error.expected), found \(describe(field))")
        }
    }

    /// The value of `field` for `attribute`, checked against the attribute's type.
    ///
    /// - Parameters:
    ///   - field: The field as the file wrote it.
    ///   - attribute: The attribute it is imported into.
    ///   - dates: How text becomes a date.
    /// - Returns: A value that matches the attribute's type, or ``AttributeValue/null``.
    /// - Throws: ``Mismatch``, saying what was expected, when the field does not fit.
    static func attributeValue(
        _ field: ImportedField, for attribute: AttributeDescription, dates: ImportedDateFormat
    ) throws(Mismatch) -> AttributeValue {
        if field == .null { return .null }
        let type = attribute.type
        func failure(_ expected: String) -> Mismatch { Mismatch(expected: expected) }
        switch type {
        case .integer16, .integer32, .integer64:
            let range = type.integerRange ?? Int64.min...Int64.max
            let expected =
                type == .integer64 ? "an integer" : "an integer from \(range.lowerBound) to \(range.upperBound)"
            guard let text = numberText(field) else { throw failure(expected) }
            switch exactInteger(text) {
            case .value(let value) where range.contains(value): return .integer(value)
            case .value, .outOfRange: throw failure(expected)
            case .notIntegral: throw failure("\(expected) without a fraction")
            case .invalid: throw failure(expected)
            }
        case .double:
            if let special = specialFloatingPoint(field) { return .double(special) }
            guard let text = numberText(field), let value = Double(text) else {
                throw failure("a number (or \"NaN\", \"Infinity\", \"-Infinity\")")
            }
            guard value.isFinite else { throw failure("a number within Double's range") }
            return .double(value)
        case .float:
            if let special = specialFloatingPoint(field) { return .float(Float(special)) }
            guard let text = numberText(field), let value = Float(text) else {
                throw failure("a number (or \"NaN\", \"Infinity\", \"-Infinity\")")
            }
            guard value.isFinite else { throw failure("a number within Float's range") }
            return .float(value)
        case .decimal:
            guard let text = numberText(field) else { throw failure("a decimal number") }
            // `Decimal(string:)` rounds away digits beyond its 38 silently.
            guard significantDigits(text) <= 38 else {
                throw failure("a decimal number of at most 38 significant digits")
            }
            // No locale: a point before the fraction whatever the user's, and no locale lookup
            // (which costs more than the parse).
            guard let value = Decimal(string: text, locale: nil) else {
                throw failure("a decimal number within Decimal's range")
            }
            return .decimal(value)
        case .string:
            switch field {
            case .string(let text), .text(let text): return .string(text)
            default: throw failure("a string")
            }
        case .boolean:
            switch field {
            case .boolean(let flag): return .boolean(flag)
            case .number(let text), .string(let text), .text(let text):
                switch trimmed(text).lowercased() {
                case "true", "yes", "1": return .boolean(true)
                case "false", "no", "0": return .boolean(false)
                default: break
                }
            default: break
            }
            throw failure("true or false (or yes, no, 1, 0)")
        case .date:
            guard let text = trimmedText(field), let date = dates.date(from: text) else {
                throw failure(dates.expected)
            }
            return .date(date)
        case .binaryData:
            guard let text = trimmedText(field), let data = Data(base64Encoded: text) else {
                throw failure("Base64 text")
            }
            return .data(data)
        case .uuid:
            guard let text = trimmedText(field), let uuid = UUID(uuidString: text) else {
                throw failure("a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
            }
            return .uuid(uuid)
        case .uri:
            guard let text = trimmedText(field), let url = URL(string: text), url.scheme?.isEmpty == false else {
                throw failure("a URI with a scheme, such as https://example.com/")
            }
            return .url(url)
        case .codable:
            return .codable(try codableJSON(field, failure: failure))
        }
    }

    /// The JSON text of a Codable value.
    private static func codableJSON(_ field: ImportedField, failure: (String) -> Mismatch) throws(Mismatch) -> Data {
        switch field {
        case .null: return Data("null".utf8)
        case .json(let text), .number(let text): return Data(text.utf8)
        case .boolean(let flag): return Data((flag ? "true" : "false").utf8)
        case .string(let text):
            // Encoded as Strata encodes Codable values, so that an exported string reads back
            // to the same bytes.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(text) else { throw failure("a JSON value") }
            return data
        case .text(let text):
            let data = Data(text.utf8)
            guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil else {
                throw failure("JSON text")
            }
            return data
        }
    }

    /// The text of a number: a JSON number's literal, or a string or CSV field holding one.
    private static func numberText(_ field: ImportedField) -> String? {
        switch field {
        case .number(let text): return text
        case .string(let text), .text(let text):
            let text = trimmed(text)
            return isNumberText(text) ? text : nil
        default: return nil
        }
    }

    /// The text of a string or CSV field, without surrounding spaces.
    private static func trimmedText(_ field: ImportedField) -> String? {
        switch field {
        case .string(let text), .text(let text): trimmed(text)
        default: nil
        }
    }

    /// `text` without the spaces and tabs around it.
    private static func trimmed(_ text: String) -> String {
        // Foundation's trimming costs microseconds even when there is nothing to trim.
        func isBlank(_ byte: UInt8?) -> Bool { byte == .space || byte == .tab }
        guard isBlank(text.utf8.first) || isBlank(text.utf8.last) else { return text }
        var slice = text[...]
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }

    /// NaN or an infinity, from the strings the exporter writes for them.
    private static func specialFloatingPoint(_ field: ImportedField) -> Double? {
        guard let text = trimmedText(field) else { return nil }
        switch text {
        case "NaN": return .nan
        case "Infinity", "+Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return nil
        }
    }

    /// Whether `text` is a decimal number: `[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`.
    ///
    /// Checked first because `Double(_:)` also reads hexadecimal and `nan`, and `Decimal(string:)`
    /// reads a number at the start of any text.
    static func isNumberText(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if let sign = bytes.first, sign == .plus || sign == .minus { bytes.removeFirst() }
        let whole = bytes.prefix { $0.isDigit }.count
        bytes.removeFirst(whole)
        var fraction = 0
        if bytes.first == .point {
            bytes.removeFirst()
            fraction = bytes.prefix { $0.isDigit }.count
            bytes.removeFirst(fraction)
        }
        guard whole + fraction > 0 else { return false }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes.removeFirst()
            if let sign = bytes.first, sign == .plus || sign == .minus { bytes.removeFirst() }
            let exponent = bytes.prefix { $0.isDigit }.count
            guard exponent > 0 else { return false }
            bytes.removeFirst(exponent)
        }
        return bytes.isEmpty
    }

    /// The number of significant digits of number text (leading and trailing zeros excluded).
    static func significantDigits(_ text: String) -> Int {
        let mantissa = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let digits = mantissa.filter { $0.isDigit }.drop { $0 == .digitZero }
        return digits.count - digits.reversed().prefix { $0 == .digitZero }.count
    }

    /// What number text says as an integer.
    enum IntegerText: Equatable {
        case value(Int64)
        case notIntegral
        case outOfRange
        case invalid
    }

    /// The exact integer that number text writes (`3`, `-3.0`, `3e2`, `1.5e1`), worked out from
    /// its digits rather than through `Double`, which would round large values.
    static func exactInteger(_ text: String) -> IntegerText {
        // Plain integers, the common case, need no digit work.
        if let value = Int64(text) { return .value(value) }
        guard isNumberText(text) else { return .invalid }
        var bytes = text.utf8[...]
        var isNegative = false
        if let sign = bytes.first, sign == .plus || sign == .minus {
            isNegative = sign == .minus
            bytes.removeFirst()
        }
        var digits: [UInt8] = []
        var scale = 0
        var inFraction = false
        while let byte = bytes.first, byte.isDigit || byte == .point {
            bytes.removeFirst()
            if byte == .point {
                inFraction = true
            } else {
                digits.append(byte - .digitZero)
                if inFraction { scale -= 1 }
            }
        }
        if !bytes.isEmpty {
            bytes.removeFirst()  // e or E
            var exponentIsNegative = false
            if let sign = bytes.first, sign == .plus || sign == .minus {
                exponentIsNegative = sign == .minus
                bytes.removeFirst()
            }
            // Clamped: any exponent this large is out of range (or, negative, a fraction) anyway.
            var exponent = 0
            for byte in bytes { exponent = min(exponent * 10 + Int(byte - .digitZero), 1_000_000) }
            scale += exponentIsNegative ? -exponent : exponent
        }
        var significant = digits.drop { $0 == 0 }
        guard !significant.isEmpty else { return .value(0) }
        while significant.last == 0 {
            significant.removeLast()
            scale += 1
        }
        guard scale >= 0 else { return .notIntegral }
        guard significant.count + scale <= 19 else { return .outOfRange }
        var magnitude: UInt64 = 0
        for digit in significant + repeatElement(0, count: scale) {
            let (product, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflowed else { return .outOfRange }
            magnitude = product + UInt64(digit)
        }
        if isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return .outOfRange }
            return .value(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return .outOfRange }
        return .value(Int64(magnitude))
    }

    /// A field as a message shows it.
    static func describe(_ field: ImportedField) -> String {
        func shortened(_ text: String) -> String {
            text.count > 40 ? String(text.prefix(39)) + "…" : text
        }
        switch field {
        case .null: return "null"
        case .boolean(let flag): return flag ? "true" : "false"
        case .number(let text): return shortened(text)
        case .string(let text), .text(let text): return "\"" + shortened(text) + "\""
        case .json(let text): return text.hasPrefix("[") ? "a JSON array" : "a JSON object"
        }
    }
}
