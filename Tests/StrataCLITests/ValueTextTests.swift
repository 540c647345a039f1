import Foundation
import Testing

@testable import StrataCLI

/// The encodings `strata export` writes: the fast paths must write what Foundation writes.
@Suite struct ValueTextTests {
    @Test func decimalsHaveTheDigitsDescriptionGives() throws {
        // The fast path runs on this platform (else every check below compares description
        // with itself).
        #expect(DecimalLayout.current != nil)
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "0", "1", "-1", "0.1", "-0.000001", "12.345", "187436818.125", "1e10", "-1.5e-20", "3402823669209384634633746074317682114",
            "99999999999999999999999999999999999999", "0.00000000000000000000000000000000000001", "1.50", "100",
            "-12.000000000000000000001", "123456789012345678901234567890.5",
        ]
        for _ in 0..<2_000 {
            let digits = String(UInt64.random(in: 0...UInt64.max, using: &generator))
            let scale = Int.random(in: -30...30, using: &generator)
            texts.append((Bool.random(using: &generator) ? "-" : "") + digits + "e\(scale)")
        }
        for text in texts {
            let number = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), "\(text)")
            #expect(ValueText.decimalText(number) == number.description, "\(text)")
        }
        for number in [Decimal(0), Decimal(-0.5), Decimal(Int64.max), Decimal(Int64.min), Decimal.greatestFiniteMagnitude] {
            #expect(ValueText.decimalText(number) == number.description)
        }
    }

    @Test func datesAndIdentifiersHaveOneForm() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(ValueText.iso8601(date) == "2023-11-14T22:13:20.25Z")
        #expect(ValueText.iso8601(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.5Z")
        #expect(ValueText.parseDate("2023-11-14T22:13:20.25Z") == date)
        #expect(ValueText.parseDate("2023-11-15T00:13:20.25+02:00") == date)
        #expect(ValueText.parseDate("2026-02-30") == nil)
        let uuid = UUID()
        var bytes: [UInt8] = []
        ValueText.appendUUID(uuid, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == uuid.uuidString)
        #expect(ValueText.double(-0.0) == "-0.0")
    }

    @Test func codableJSONIsRecognizedWithoutParsing() {
        #expect(ValueText.looksLikeJSON(Data(#"["drama","crime"]"#.utf8)))
        #expect(ValueText.looksLikeJSON(Data(#"{"a":[1,2.5e-3,true,null],"b":"x\"]"}"#.utf8)))
        #expect(!ValueText.looksLikeJSON(Data(#"["open""#.utf8)))
        #expect(!ValueText.looksLikeJSON(Data("[1] trailing".utf8)))
        #expect(!ValueText.looksLikeJSON(Data("plain text".utf8)))
        var bytes: [UInt8] = []
        ValueText.appendJSON(.codable(Data("not json".utf8)), to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""not json""#)
    }
}
