import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The reading half of `strata import`: records streamed from JSON, NDJSON and CSV files, and
/// their fields converted to attribute values.
@Suite(.timeLimit(.minutes(10))) struct RecordReaderTests {
    // MARK: Helpers

    /// Writes `bytes` to a file named `name` in `directory`; returns its path.
    private func write(_ bytes: some Sequence<UInt8>, named name: String, in directory: TemporaryDirectory) throws
        -> String
    {
        let url = directory.file(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Every record of `text` read as `format`, with chunks of `chunkSize` bytes.
    private func records(
        _ text: String, _ format: ImportFormat, chunkSize: Int = RecordReader.defaultChunkSize
    ) throws -> [ImportedRecord] {
        let directory = try TemporaryDirectory()
        let path = try write(Array(text.utf8), named: "input.\(format.rawValue)", in: directory)
        return try readAll(RecordReader(path: path, format: format, chunkSize: chunkSize))
    }

    private func readAll(_ reader: RecordReader) throws -> [ImportedRecord] {
        var records: [ImportedRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The failure reading `text` as `format` gives, and the file's path.
    private func failure(_ text: String, _ format: ImportFormat, chunkSize: Int = RecordReader.defaultChunkSize)
        throws -> (message: String, path: String)
    {
        let directory = try TemporaryDirectory()
        let path = try write(Array(text.utf8), named: "bad.\(format.rawValue)", in: directory)
        let reader = try RecordReader(path: path, format: format, chunkSize: chunkSize)
        let error = #expect(throws: CommandFailure.self) { _ = try readAll(reader) }
        return (error?.message ?? "", path)
    }

    // MARK: Formats

    @Test func jsonArrayGivesFieldsInFileOrderWithTheirLines() throws {
        let text = """
            [
              {"name": "Heat", "year": 1995, "rating": 8.3, "seen": true, "notes": null},
              {"year":2004,"name":"Collateral","seen":false}
              ,
              {}
            ]

            """
        let read = try records(text, .json)
        #expect(read.count == 3)
        #expect(read.map(\.line) == [2, 3, 5])
        #expect(read[0].fields.map(\.name) == ["name", "year", "rating", "seen", "notes"])
        #expect(
            read[0].fields.map(\.value) == [.string("Heat"), .number("1995"), .number("8.3"), .boolean(true), .null])
        #expect(read[1].fields.map(\.name) == ["year", "name", "seen"])
        #expect(read[1].fields.map(\.value) == [.number("2004"), .string("Collateral"), .boolean(false)])
        #expect(read[2].fields.isEmpty)

        #expect(try records("[]", .json).isEmpty)
        #expect(try records("\n  [ \n ]  \n\n", .json).isEmpty)
    }

    @Test func ndjsonReadsOneObjectPerLineAndSkipsBlankLines() throws {
        let text = "{\"a\":1,\"b\":\"x\"}\n\n{\"a\":2}\r\n   \n\t{ \"a\" : 3 }  "
        let read = try records(text, .ndjson)
        #expect(read.map(\.line) == [1, 3, 5])
        #expect(read.map { $0.fields.map(\.name) } == [["a", "b"], ["a"], ["a"]])
        #expect(read.map { $0.fields.map(\.value) } == [[.number("1"), .string("x")], [.number("2")], [.number("3")]])
        #expect(try records("", .ndjson).isEmpty)
        #expect(try records("\n\n", .ndjson).isEmpty)
    }

    @Test func csvNamesFieldsFromTheHeader() throws {
        let text = "name,year,notes\nHeat,1995,\n\"Collateral, the film\",2004,\"\"\n"
        let read = try records(text, .csv)
        #expect(read.map(\.line) == [2, 3])
        #expect(read.allSatisfy { $0.fields.map(\.name) == ["name", "year", "notes"] })
        #expect(read[0].fields.map(\.value) == [.text("Heat"), .text("1995"), .null])
        #expect(read[1].fields.map(\.value) == [.text("Collateral, the film"), .text("2004"), .text("")])
        // A file with only a header, or nothing, has no records.
        #expect(try records("name,year\r\n", .csv).isEmpty)
        #expect(try records("", .csv).isEmpty)
    }

    @Test func jsonStringEscapesAreDecoded() throws {
        let text = #"[{"s": "caf\u00e9 \"q\" \\ \/ \b\f\n\r\t \ud83c\udfac é 🎬", "\u0041": "\u0000"}]"#
        let read = try records(text, .json)
        #expect(read[0].fields.map(\.name) == ["s", "A"])
        let decoded = "café \"q\" \\ / \u{8}\u{C}\n\r\t 🎬 é 🎬"
        #expect(read[0].fields.map(\.value) == [.string(decoded), .string("\u{0}")])
    }

    @Test func numbersKeepTheirLiteralText() throws {
        let literals = [
            "0.1000000000000000055511151231257827", "-0", "3e2", "1E-7", "-2.50", "12345678901234567890123", "0",
        ]
        let text =
            "[{" + literals.enumerated().map { "\"n\($0.offset)\": \($0.element)" }.joined(separator: ", ") + "}]"
        #expect(try records(text, .json)[0].fields.map(\.value) == literals.map { .number($0) })
        #expect(try records(#"{"n": -0.000e+10}"#, .ndjson)[0].fields.map(\.value) == [.number("-0.000e+10")])
    }

    @Test func nestedValuesAreKeptAsRawJSON() throws {
        let text = """
            [{"tags": ["a", {"b": [1, 2.50, "]}"]}],
              "meta": {
                "k": "v\\"}"
              },
              "empty": [], "object": {}},
             {"after": true}]
            """
        let read = try records(text, .json)
        #expect(
            read[0].fields.map(\.value) == [
                .json(#"["a", {"b": [1, 2.50, "]}"]}]"#), .json("{\n    \"k\": \"v\\\"}\"\n  }"), .json("[]"),
                .json("{}"),
            ])
        // Line breaks inside a nested value still count.
        #expect(read[1].line == 6)
    }

    @Test func csvQuotingLineBreaksCRLFAndByteOrderMark() throws {
        let text =
            "\u{FEFF}id,quote\r\n1,\"She said \"\"hi\"\", then left\"\r\n2,\"two\r\nlines\nand three\"\r\n3,plain\r\n"
        let read = try records(text, .csv)
        // The second row spans three lines.
        #expect(read.map(\.line) == [2, 3, 6])
        #expect(read[0].fields.map(\.name) == ["id", "quote"])
        #expect(
            read.map { $0.fields.map(\.value) } == [
                [.text("1"), .text("She said \"hi\", then left")],
                [.text("2"), .text("two\r\nlines\nand three")],
                [.text("3"), .text("plain")],
            ])
        // A byte order mark is skipped in JSON too.
        #expect(try records("\u{FEFF}[{\"a\":1}]", .json).count == 1)
        #expect(try records("\u{FEFF}{\"a\":1}", .ndjson).count == 1)
    }

    @Test func csvTellsNullFromTheEmptyString() throws {
        let read = try records("a,b,c,d\n,\"\",x,\n\"\",,,\"\"", .csv)
        #expect(
            read.map { $0.fields.map(\.value) } == [
                [.null, .text(""), .text("x"), .null],
                [.text(""), .null, .null, .text("")],
            ])
        // An empty line is a null in a one-column file (as an export writes it), skipped otherwise.
        #expect(
            try records("a\r\n1\r\n\r\n2\r\n", .csv).map { $0.fields.map(\.value) } == [
                [.text("1")], [.null], [.text("2")],
            ])
        #expect(try records("a,b\n1,2\n\n3,4\n\n", .csv).map(\.line) == [2, 4])
    }

    // MARK: Malformed input

    /// A malformed file, the line its failure names and words the message must hold.
    struct MalformedInput: Sendable, CustomTestStringConvertible {
        var name: String
        var format: ImportFormat
        var text: String
        var line: Int
        var words: String
        var testDescription: String { name }
    }

    static let malformedInputs: [MalformedInput] = [
        .init(name: "unterminated string", format: .json, text: "[\n{\"a\": \"abc", line: 2, words: "not closed"),
        .init(
            name: "missing comma", format: .json, text: "[\n{\"a\": 1\n \"b\": 2}]", line: 3,
            words: "expected ',' or '}', found '\"'"),
        .init(
            name: "missing comma between records", format: .json, text: "[{\"a\": 1}\n\n{\"a\": 2}]", line: 3,
            words: "expected ',' or ']', found '{'"),
        .init(
            name: "garbage after the array", format: .json, text: "[{\"a\": 1}]\n\nxyz", line: 3,
            words: "expected the end of the file, found 'x'"),
        .init(name: "not an array", format: .json, text: "{\"a\": 1}", line: 1, words: "expected '[', found '{'"),
        .init(name: "array of numbers", format: .json, text: "[\n1]", line: 2, words: "expected '{', found '1'"),
        .init(
            name: "trailing comma", format: .json, text: "[{\"a\": 1},\n]", line: 2, words: "expected '{', found ']'"),
        .init(
            name: "unclosed array", format: .json, text: "[{\"a\": 1}\n", line: 2, words: "found the end of the file"),
        .init(name: "leading zero", format: .json, text: "[{\"a\": 01}]", line: 1, words: "found '1'"),
        .init(name: "bare word", format: .json, text: "[{\"a\": nope}]", line: 1, words: "expected 'null', found 'o'"),
        .init(
            name: "fraction without digits", format: .json, text: "[{\"a\": 1.}]", line: 1,
            words: "expected a digit, found '}'"),
        .init(name: "unknown escape", format: .json, text: #"[{"a": "\x"}]"#, line: 1, words: "found 'x'"),
        .init(name: "lone high surrogate", format: .json, text: #"[{"a": "\ud83c"}]"#, line: 1, words: "surrogate"),
        .init(name: "lone low surrogate", format: .json, text: #"[{"a": "\udfac"}]"#, line: 1, words: "surrogate"),
        .init(name: "short unicode escape", format: .json, text: #"[{"a": "\u12"}]"#, line: 1, words: "hexadecimal"),
        .init(name: "raw tab in a string", format: .json, text: "[{\"a\": \"x\ty\"}]", line: 1, words: "found a tab"),
        .init(
            name: "unclosed nested value", format: .json, text: "[{\"a\": [1, 2}]", line: 1,
            words: "expected ',' or ']', found '}'"),
        .init(
            name: "duplicate field", format: .json, text: "[{\"a\": 1, \"a\": 2}]", line: 1,
            words: "\"a\" appears twice"),
        .init(name: "unquoted field name", format: .json, text: "[{a: 1}]", line: 1, words: "expected '\"', found 'a'"),
        .init(
            name: "line that is not an object", format: .ndjson, text: "{\"a\": 1}\n\n[1, 2]\n", line: 3,
            words: "expected '{', found '['"),
        .init(
            name: "object across lines", format: .ndjson, text: "{\"a\": 1}\n{\"a\":\n2}", line: 2,
            words: "found a line break"),
        .init(
            name: "two objects on a line", format: .ndjson, text: "{\"a\": 1} {\"a\": 2}", line: 1,
            words: "expected a line break, found '{'"),
        .init(
            name: "row with too many fields", format: .csv, text: "a,b\n1,2\n1,2,3\n", line: 3,
            words: "expected 2 fields, found 3"),
        .init(
            name: "row with too few fields", format: .csv, text: "a,b\r\n1,2\r\n\"x\r\ny\"\r\n", line: 3,
            words: "expected 2 fields, found 1"),
        .init(name: "unclosed quote", format: .csv, text: "a\n\"abc\n", line: 2, words: "not closed"),
        .init(
            name: "quote in an unquoted field", format: .csv, text: "a\nab\"c\n", line: 2,
            words: "quote the whole field"),
        .init(name: "text after a closing quote", format: .csv, text: "a,b\n\"x\"y,2\n", line: 2, words: "found 'y'"),
        .init(
            name: "unnamed header column", format: .csv, text: "a,,c\n1,2,3\n", line: 1,
            words: "column 2 of the header has no name"),
        .init(name: "duplicate header column", format: .csv, text: "a,b,a\n", line: 1, words: "\"a\" twice"),
    ]

    @Test(arguments: malformedInputs, [1, RecordReader.defaultChunkSize])
    func malformedInputFailsNamingItsLine(_ input: MalformedInput, chunkSize: Int) throws {
        let (message, path) = try failure(input.text, input.format, chunkSize: chunkSize)
        #expect(message.hasPrefix("\(path):\(input.line): "), "\(message)")
        #expect(message.contains(input.words), "\(message)")
    }

    @Test func invalidUTF8IsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = try write(Array("a\n".utf8) + [0x66, 0xFF, 0x0A], named: "bad.csv", in: directory)
        let reader = try RecordReader(path: path, format: .csv)
        let error = #expect(throws: CommandFailure.self) { _ = try readAll(reader) }
        #expect(error?.message.hasPrefix("\(path):2: ") == true)
        #expect(error?.message.contains("UTF-8") == true)
    }

    // MARK: Chunks and streams

    /// Chunk boundaries everywhere: inside strings, escapes, surrogate pairs, multi-byte
    /// characters, numbers, literals, nested values, quoted CSV fields and the byte order mark.
    @Test(arguments: [1, 2, 3, 4, 5, 7, 13])
    func chunkBoundariesFallAnywhere(chunkSize: Int) throws {
        let json = """
            \u{FEFF}[{"s": "caf\\u00e9 \\"q\\" \\ud83c\\udfac é🎬", "n": -12.5e-3, "t": true, "f": false, "z": null,
              "nested": {"a": [1, "x\\"]"], "b": {}}},
             {"big": 0.1000000000000000055511151231257827}]
            """
        let ndjson = "\u{FEFF}{\"s\": \"\\u00e9\\n🎬\", \"n\": 12345678901234567890}\r\n\n{\"a\": [true, null]}\n"
        let csv = "\u{FEFF}id,text\r\n1,\"a \"\"quoted\"\", é🎬\r\nline\"\r\n2,plain é\r\n3,\r\n"
        for (text, format) in [(json, ImportFormat.json), (ndjson, .ndjson), (csv, .csv)] {
            let whole = try records(text, format)
            let chunked = try records(text, format, chunkSize: chunkSize)
            #expect(chunked.count == whole.count)
            for (expected, actual) in zip(whole, chunked) {
                #expect(actual.line == expected.line)
                #expect(actual.fields.map(\.name) == expected.fields.map(\.name))
                #expect(actual.fields.map(\.value) == expected.fields.map(\.value))
            }
        }
        let json0 = try records(json, .json, chunkSize: chunkSize)
        #expect(json0.first?.fields.first?.value == .string("café \"q\" 🎬 é🎬"))
        #expect(json0.first?.fields.last?.value == .json(#"{"a": [1, "x\"]"], "b": {}}"#))
        #expect(json0.last?.fields.first?.value == .number("0.1000000000000000055511151231257827"))
        let csv0 = try records(csv, .csv, chunkSize: chunkSize)
        #expect(csv0.map(\.line) == [2, 4, 5])
        #expect(csv0.first?.fields.last?.value == .text("a \"quoted\", é🎬\r\nline"))
    }

    @Test func readsFromAPipeWithoutASize() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let text = Array("{\"a\": 1}\n{\"a\": 2}\n".utf8)
        // Smaller than a pipe's buffer, so written at once before reading.
        let writing = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        try writing.write(contentsOf: text)
        try writing.close()
        let reader = try RecordReader(
            descriptor: ends[0], closesDescriptor: true, name: "standard input", format: .ndjson)
        #expect(reader.fileSize == nil)
        #expect(try readAll(reader).map { $0.fields.map(\.value) } == [[.number("1")], [.number("2")]])
        #expect(reader.bytesRead == text.count)
    }

    @Test func aMissingFileOrADirectoryIsAClearFailure() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.file("missing.json").path
        let missingError = #expect(throws: CommandFailure.self) { try RecordReader(path: missing, format: .json) }
        #expect(missingError?.message == "\(missing) does not exist; name the file to import.")
        let folderError = #expect(throws: CommandFailure.self) {
            try RecordReader(path: directory.url.path, format: .json)
        }
        #expect(folderError?.message == "\(directory.url.path) is a directory; name a file to import.")
    }

    @Test func reportsTheFileSizeAndTheBytesRead() throws {
        let directory = try TemporaryDirectory()
        let bytes = Array("[{\"a\": 1}, {\"a\": 2}]\n".utf8)
        let path = try write(bytes, named: "two.json", in: directory)
        let reader = try RecordReader(path: path, format: .json, chunkSize: 4)
        #expect(reader.fileSize == bytes.count)
        #expect(reader.bytesRead == 0)
        _ = try reader.next()
        #expect(reader.bytesRead > 0 && reader.bytesRead < bytes.count)
        _ = try readAll(reader)
        #expect(reader.bytesRead == bytes.count)
    }

    /// 200,000 records in chunks: memory stays that of one chunk and one record.
    @Test func readsALargeNDJSONFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("large.ndjson")
        try Data().write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        let count = 200_000
        var batch = ""
        for index in 1...count {
            batch += #"{"id": \#(index), "name": "Movie \#(index)", "price": 12.50, "tags": ["a", "b"]}"# + "\n"
            if index % 10_000 == 0 {
                try handle.write(contentsOf: Data(batch.utf8))
                batch = ""
            }
        }
        try handle.close()
        let reader = try RecordReader(path: url.path, format: .ndjson)
        var read = 0
        var last: ImportedRecord?
        while let record = try reader.next() {
            read += 1
            last = record
        }
        #expect(read == count)
        #expect(last?.line == count)
        #expect(last?.fields.first?.value == .number("\(count)"))
        #expect(reader.bytesRead == reader.fileSize)
    }

    // MARK: Typed values

    private func value(_ field: ImportedField, _ type: AttributeType, line: Int = 1) throws -> AttributeValue {
        try ImportedValues.attributeValue(field, for: AttributeDescription(name: "field", type: type), line: line)
    }

    /// The failure message converting `field` to `type` gives.
    private func conversionFailure(_ field: ImportedField, _ type: AttributeType, line: Int = 7) -> String {
        let error = #expect(throws: CommandFailure.self, "\(field) as \(type)") {
            _ = try value(field, type, line: line)
        }
        return error?.message ?? ""
    }

    @Test func integersMustBeIntegralAndWithinTheirType() throws {
        #expect(try value(.number("42"), .integer16) == .integer(42))
        #expect(try value(.text(" -32768 "), .integer16) == .integer(-32768))
        #expect(try value(.number("32767"), .integer16) == .integer(32767))
        #expect(try value(.number("3.0"), .integer32) == .integer(3))
        #expect(try value(.number("3e2"), .integer32) == .integer(300))
        #expect(try value(.number("1.5e1"), .integer32) == .integer(15))
        #expect(try value(.number("-0"), .integer32) == .integer(0))
        #expect(try value(.string("9007199254740993"), .integer64) == .integer(9_007_199_254_740_993))
        #expect(try value(.number("9223372036854775807"), .integer64) == .integer(.max))
        #expect(try value(.number("-9223372036854775808"), .integer64) == .integer(.min))
        #expect(try value(.null, .integer16) == .null)

        let tooLarge = conversionFailure(.number("32768"), .integer16)
        #expect(
            tooLarge
                == "line 7: attribute \"field\" (Integer 16): expected an integer from -32768 to 32767, found 32768")
        #expect(conversionFailure(.text("-32769"), .integer16).contains("from -32768 to 32767"))
        #expect(conversionFailure(.number("9223372036854775808"), .integer64).contains("expected an integer"))
        #expect(conversionFailure(.number("1e30"), .integer64).contains("expected an integer"))
        let fraction = conversionFailure(.number("1.5"), .integer32, line: 12)
        #expect(fraction.hasPrefix("line 12: attribute \"field\" (Integer 32)"))
        #expect(fraction.hasSuffix("found 1.5"))
        #expect(conversionFailure(.number("1e-1"), .integer64).contains("without a fraction, found 1e-1"))
        #expect(conversionFailure(.text("twelve"), .integer64).hasSuffix("found \"twelve\""))
        #expect(conversionFailure(.boolean(true), .integer64).hasSuffix("found true"))
        #expect(conversionFailure(.text("0x10"), .integer64).contains("expected an integer"))
    }

    @Test func floatingPointAndDecimalNumbers() throws {
        #expect(try value(.number("0.1"), .double) == .double(0.1))
        #expect(try value(.text("-2.5e-3"), .double) == .double(-2.5e-3))
        #expect(try value(.string("Infinity"), .double) == .double(.infinity))
        #expect(try value(.text("-Infinity"), .double) == .double(-.infinity))
        guard case .double(let nan) = try value(.string("NaN"), .double) else {
            Issue.record("NaN is not a Double")
            return
        }
        #expect(nan.isNaN)
        #expect(try value(.number("3.4028235e38"), .float) == .float(.greatestFiniteMagnitude))
        #expect(try value(.string("-Infinity"), .float) == .float(-.infinity))
        #expect(conversionFailure(.number("1e400"), .double).contains("within Double's range"))
        #expect(conversionFailure(.number("1e39"), .float).contains("within Float's range"))
        #expect(conversionFailure(.text("nan"), .double).contains("expected a number"))
        #expect(conversionFailure(.text("0x1p3"), .double).contains("expected a number"))

        let digits = "0.1000000000000000055511151231257827"
        guard case .decimal(let decimal) = try value(.number(digits), .decimal) else {
            Issue.record("not a Decimal")
            return
        }
        #expect(decimal.description == digits)
        #expect(try value(.string("12.50"), .decimal) == .decimal(Decimal(string: "12.5") ?? 0))
        #expect(try value(.text("1e3"), .decimal) == .decimal(1000))
        #expect(conversionFailure(.text("1.5abc"), .decimal).contains("expected a decimal number"))
        #expect(
            conversionFailure(.number("123456789012345678901234567890123456789"), .decimal).contains("38 significant"))
        #expect(conversionFailure(.number("1e-200"), .decimal).contains("Decimal's range"))
    }

    @Test func stringsAndBooleans() throws {
        #expect(try value(.string("Heat"), .string) == .string("Heat"))
        #expect(try value(.text(" padded "), .string) == .string(" padded "))
        #expect(try value(.text(""), .string) == .string(""))
        #expect(conversionFailure(.number("12"), .string).hasSuffix("expected a string, found 12"))
        #expect(conversionFailure(.boolean(false), .string).contains("expected a string"))
        #expect(conversionFailure(.json("[1]"), .string).hasSuffix("found a JSON array"))

        #expect(try value(.boolean(true), .boolean) == .boolean(true))
        for word in ["true", "TRUE", "Yes", "1"] { #expect(try value(.text(word), .boolean) == .boolean(true)) }
        for word in ["false", "False", "no", "0"] { #expect(try value(.text(word), .boolean) == .boolean(false)) }
        #expect(try value(.string("yes"), .boolean) == .boolean(true))
        #expect(conversionFailure(.text("maybe"), .boolean).contains("expected true or false"))
        #expect(conversionFailure(.number("2"), .boolean).contains("expected true or false"))
    }

    @Test func datesDataIdentifiersAndURIs() throws {
        let date = try value(.string("2026-11-27T10:00:00.25Z"), .date)
        #expect(date == .date(Date(timeIntervalSince1970: 1_795_773_600.25)))
        #expect(try value(.text("2026-11-27"), .date) == .date(Date(timeIntervalSince1970: 1_795_737_600)))
        #expect(conversionFailure(.text("27/11/2026"), .date).contains("ISO 8601"))
        #expect(conversionFailure(.number("1795773600"), .date).contains("ISO 8601"))

        #expect(try value(.string("AAEC/w=="), .binaryData) == .data(Data([0, 1, 2, 255])))
        #expect(try value(.text(""), .binaryData) == .data(Data()))
        #expect(conversionFailure(.text("not base64!"), .binaryData).contains("Base64"))

        let uuid = UUID()
        #expect(try value(.string(uuid.uuidString.lowercased()), .uuid) == .uuid(uuid))
        #expect(conversionFailure(.text("1234"), .uuid).contains("expected a UUID"))

        #expect(
            try value(.text("https://example.com/a?b=c#d"), .uri)
                == .url(URL(string: "https://example.com/a?b=c#d") ?? URL(fileURLWithPath: "/")))
        #expect(conversionFailure(.string("relative/path"), .uri).contains("with a scheme"))
    }

    @Test func codableValuesAreTheirJSON() throws {
        func json(_ field: ImportedField) throws -> String? {
            guard case .codable(let data) = try value(field, .codable) else { return nil }
            return String(decoding: data, as: UTF8.self)
        }
        #expect(try json(.json(#"{"b": [1, 2.50], "a": null}"#)) == #"{"b": [1, 2.50], "a": null}"#)
        #expect(try json(.number("2.50")) == "2.50")
        #expect(try json(.boolean(true)) == "true")
        #expect(try json(.string("a/b \"c\"\n")) == #""a/b \"c\"\n""#)
        #expect(try json(.text(#"{"a":1}"#)) == #"{"a":1}"#)
        #expect(try json(.text("\"text\"")) == "\"text\"")
        #expect(conversionFailure(.text("{not json"), .codable).contains("expected JSON text"))
    }

    // MARK: Round trip

    /// What `strata query` writes, `strata import` reads back as the same values.
    @Test(arguments: ImportFormat.allCases)
    func exportedValuesImportIdentically(format: ImportFormat) throws {
        let attributes: [AttributeDescription] = [
            .init(name: "small", type: .integer16), .init(name: "medium", type: .integer32),
            .init(name: "large", type: .integer64), .init(name: "double", type: .double),
            .init(name: "float", type: .float), .init(name: "decimal", type: .decimal),
            .init(name: "string", type: .string), .init(name: "flag", type: .boolean),
            .init(name: "date", type: .date), .init(name: "data", type: .binaryData),
            .init(name: "uuid", type: .uuid), .init(name: "url", type: .uri),
            .init(name: "codable", type: .codable),
        ]
        func decimal(_ text: String) -> AttributeValue { .decimal(Decimal(string: text) ?? .nan) }
        func date(_ seconds: Double) -> AttributeValue { .date(Date(timeIntervalSince1970: seconds)) }
        let rows: [[AttributeValue]] = [
            [
                .integer(-32768), .integer(2_147_483_647), .integer(.min), .double(0.1), .float(0.1),
                decimal("0.1000000000000000055511151231257827"), .string("Line 1\nLine \"2\", é 🎬"),
                .boolean(true), date(1_795_773_600.123456), .data(Data([0, 1, 2, 255])), .uuid(UUID()),
                .url(URL(string: "https://example.com/a?b=c&d=e#f") ?? URL(fileURLWithPath: "/")),
                .codable(Data(#"{"a":[1,2.5,"x/y"],"b":null}"#.utf8)),
            ],
            [.null, .null, .null, .null, .null, .null, .string(""), .null, .null, .null, .null, .null, .null],
            [
                .integer(32767), .integer(-2_147_483_648), .integer(.max), .double(.leastNonzeroMagnitude),
                .float(.leastNonzeroMagnitude),
                decimal("-12345678901234567890.123456789"), .string(" , "), .boolean(false), date(-1_000_000_000.5),
                .data(Data()), .uuid(UUID()), .url(URL(fileURLWithPath: "/tmp/a b.txt")),
                .codable(Data(#""a/b""#.utf8)),
            ],
            [
                .integer(0), .integer(7), .integer(9_007_199_254_740_993), .double(.greatestFiniteMagnitude),
                .float(.greatestFiniteMagnitude), decimal("0"), .string("\"quoted\""), .boolean(true), date(0),
                .data(Data(repeating: 7, count: 100)), .uuid(UUID()),
                .url(URL(string: "mailto:a@example.com") ?? URL(fileURLWithPath: "/")),
                .codable(Data("3.25".utf8)),
            ],
            [
                .integer(1), .integer(1), .integer(1), .double(.nan), .float(.infinity), decimal("1e-20"),
                .string("tab\there"), .boolean(false), date(1e9 + 0.000001), .data(Data([10, 13])), .null, .null,
                .codable(Data("true".utf8)),
            ],
            [
                .integer(2), .integer(2), .integer(2), .double(-.infinity), .float(-1.5e-7),
                decimal("98765432109876543210"),
                .string("é"), .null, .null, .null, .null, .null, .codable(Data(#"[{"nested":{"deep":[]}}]"#.utf8)),
            ],
            [
                .integer(3), .integer(3), .integer(3), .double(1e15), .float(16_777_216), decimal("-0.5"),
                .string("x"), .null, date(-30_610_224_000.75), .null, .null, .null, .codable(Data("{}".utf8)),
            ],
        ]

        let directory = try TemporaryDirectory()
        let path = directory.file("export.\(format.rawValue)").path
        let channel = try OutputChannel.creatingFile(atPath: path)
        var writer: any RecordWriter =
            switch format {
            case .json: JSONRecordWriter(channel: channel, asArray: true)
            case .ndjson: JSONRecordWriter(channel: channel, asArray: false)
            case .csv: CSVRecordWriter(channel: channel)
            }
        try writer.begin(columns: attributes.map(\.name))
        for row in rows { try writer.write(row) }
        try writer.finish()
        try channel.close()

        let imported = try readAll(RecordReader(path: path, format: format, chunkSize: 7))
        #expect(imported.count == rows.count)
        for (row, record) in zip(rows, imported) {
            #expect(record.fields.map(\.name) == attributes.map(\.name))
            for ((attribute, expected), field) in zip(zip(attributes, row), record.fields) {
                let actual = try ImportedValues.attributeValue(field.value, for: attribute, line: record.line)
                #expect(
                    Self.same(actual, expected), "\(attribute.name): \(actual) is not \(expected) (line \(record.line))"
                )
            }
        }
    }

    /// Whether two values are the same: doubles and floats by their bits, decimals by their
    /// digits, dates to the microsecond (what the export writes).
    private static func same(_ actual: AttributeValue, _ expected: AttributeValue) -> Bool {
        switch (actual, expected) {
        case (.double(let left), .double(let right)): left.bitPattern == right.bitPattern
        case (.float(let left), .float(let right)): left.bitPattern == right.bitPattern
        case (.decimal(let left), .decimal(let right)): left == right && left.description == right.description
        case (.date(let left), .date(let right)):
            (left.timeIntervalSince1970 * 1e6).rounded() == (right.timeIntervalSince1970 * 1e6).rounded()
        default: actual == expected
        }
    }
}
