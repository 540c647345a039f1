import Foundation

// MARK: - Source text

/// The format string as Unicode scalars, with the conversion from scalar positions to the
/// character offsets that errors report.
///
/// Lexing works on scalars so that a combining mark right after a quote or an identifier is
/// never merged into the punctuation's grapheme cluster.
struct PredicateSource {
    let scalars: [Unicode.Scalar]
    private let isASCII: Bool

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        isASCII = text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The 0-based character offset of the scalar at `index`.
    func characterOffset(_ index: Int) -> Int {
        if isASCII { return index }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[..<min(index, scalars.count)])
        return String(view).count
    }

    /// The text between two scalar positions.
    func text(_ start: Int, _ end: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[max(0, start)..<min(max(start, end), scalars.count)])
        return String(view)
    }

    /// Quotes source text for a message, shortened when long.
    func quoted(_ start: Int, _ end: Int) -> String {
        let limit = 32
        if end - start > limit { return "'" + text(start, start + limit) + "…'" }
        return "'" + text(start, end) + "'"
    }

    /// An ``StrataError/Code/invalidPredicate`` error at a scalar position; `message` receives
    /// the character offset.
    func error(at index: Int, _ message: (Int) -> String) -> StrataError {
        let offset = characterOffset(index)
        return StrataError(.invalidPredicate, message(offset), offset: offset)
    }

    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
        }
        return scalar.properties.isXIDStart
    }

    static func isIdentifierContinuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return isIdentifierStart(scalar) || isDigit(scalar) }
        return scalar.properties.isXIDContinue
    }

    static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    /// Whether `name` is an identifier that the lexer would read as one key.
    static func isIdentifier(_ name: some StringProtocol) -> Bool {
        var scalars = name.unicodeScalars.makeIterator()
        guard let first = scalars.next(), isIdentifierStart(first) else { return false }
        while let next = scalars.next() {
            guard isIdentifierContinuation(next) else { return false }
        }
        return true
    }

    /// Whether `path` is a key path: identifiers and collection operators joined by dots.
    static func isKeyPath(_ path: String) -> Bool {
        !path.isEmpty
            && path.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { component in
                isIdentifier(component) || CollectionOperator(rawValue: String(component)) != nil
            }
    }
}
