import Foundation
import Strata

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
