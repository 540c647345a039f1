import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - The scanner

/// The reader's state and parsers: a buffer of the current chunk, where the parser is in it,
/// and the line.
///
/// A struct held by ``RecordReader`` so that the byte loops touch their state without the
/// class's dynamic exclusivity checks.
struct RecordScanner {
    let descriptor: Int32
    /// The input's name in messages.
    let name: String
    let format: ImportFormat
    let chunkSize: Int

    private(set) var bytesRead = 0
    var buffer: [UInt8]
    var position = 0
    var end = 0
    private var reachedEnd = false
    /// The current 1-based line.
    var line = 1

    /// Raw text of a nested JSON value: bytes of chunks already left behind, then
    /// `buffer[captureStart..<position]` of the current one.
    var isCapturing = false
    var captureStart = 0
    var captured: [UInt8] = []

    /// Decoded bytes of the string or number being read.
    var scratch: [UInt8] = []

    enum State { case start, inRecords, finished }
    var state = State.start
    /// The names of the last record's fields by position, with their bytes: records of one
    /// file mostly repeat their names, which then cost a comparison instead of a new string.
    var knownNames: [(bytes: [UInt8], name: String)] = []
    /// The CSV header's names.
    var header: [String] = []

    /// Deeper nesting than this is refused rather than risking the stack.
    static let maximumDepth = 256

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
    mutating func peek() throws -> UInt8? {
        if position < end { return buffer[position] }
        return try refill() ? buffer[position] : nil
    }

    /// Replaces the buffer with the next chunk; `false` at the end of the input.
    mutating func refill() throws -> Bool {
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
    mutating func skipWhitespace(newlines: Bool = true) throws {
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
    func failure(_ problem: String, line: Int? = nil) -> CommandFailure {
        CommandFailure("\(name):\(line ?? self.line): \(problem)")
    }

    /// A failure at the current byte: `FILE:LINE: problem (expected X, found Y)`.
    mutating func unexpected(_ problem: String, expected: String) -> CommandFailure {
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
    func makeString(_ bytes: [UInt8], what: String, line: Int? = nil) throws -> String {
        // Most text is ASCII, checked in one pass far faster than the general validation.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw failure("\(what) is not valid UTF-8; convert the file to UTF-8", line: line)
        }
        return text
    }
}
