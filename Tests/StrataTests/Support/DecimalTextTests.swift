import Foundation
import Testing

@testable import Strata

/// Stored decimal text read back: the same values as `Decimal(string:)` gives, fast or not.
@Suite struct DecimalTextTests {
    let posix = Locale(identifier: "en_US_POSIX")

    /// The value, its hash and its printed form, so that a representation that only compares
    /// equal would be caught too.
    func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Decimal(string: text, locale: posix)
        let found = DecimalText.decimal(text)
        #expect(found == expected, "\(text)", sourceLocation: sourceLocation)
        #expect(found?.hashValue == expected?.hashValue, "\(text)", sourceLocation: sourceLocation)
        #expect(found?.description == expected?.description, "\(text)", sourceLocation: sourceLocation)
    }

    @Test func randomStoredDecimalsReadBackUnchanged() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let significand = Int64.random(in: -999_999_999_999_999_999...999_999_999_999_999_999, using: &generator)
            let scale = Int.random(in: 0...20, using: &generator)
            let value = Decimal(sign: significand < 0 ? .minus : .plus, exponent: -scale, significand: Decimal(significand.magnitude))
            expectSame(value.description)
        }
    }

    @Test func edgeCases() {
        for text in [
            "0", "-0", "0.0", "1.50", "0.000", "123", "1000000", "0.1", "-0.25", "999999999999999999",
            "1234567890123456789", "-12345678901234567890.5", "0.00000000000000000001", "12345678.9",
            "1e5", "1E-3", "NaN", "", "-", ".", "5.", ".5", "1.2.3", "12abc", " 12", "+3", "3,5",
        ] {
            expectSame(text)
        }
    }

    @Test func plainTextIsReadWithoutDecimalString() {
        #expect(DecimalText.plainDecimal("-12.50") == Decimal(string: "-12.5", locale: posix))
        #expect(DecimalText.plainDecimal("1e5") == nil)
        #expect(DecimalText.plainDecimal("1234567890123456789") == nil)
        #expect(DecimalText.plainDecimal("12abc") == nil)
    }
}
