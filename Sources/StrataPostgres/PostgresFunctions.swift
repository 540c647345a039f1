import Foundation
import Strata

/// The SQL functions a PostgreSQL store creates in its schema, so that the server folds text
/// for `[c]`, `[d]` and `[cd]` exactly as Swift does for the in-memory evaluator and the SQLite
/// store.
///
/// `strata_fold(text, options)` is built from this process's own Foundation, scalar by scalar:
///
/// - `[c]` maps each Unicode scalar to its case folding (a table of about 1,500 scalars, some
///   to several: "ß" to "ss"), then composes (NFC);
/// - `[d]` decomposes (NFD) and removes the marks Foundation removes: every mark that follows a
///   base character below U+0510 (Latin, Greek, Cyrillic…), and the marks below U+0510 after
///   any base; then composes;
/// - `[cd]` removes the marks, then maps the cases.
///
/// ASCII text takes a fast path (`lower` under the C collation). The tests compare the server's
/// folding with Swift's on every scalar and on random text in many scripts; only ill-formed
/// mark sequences (a mark at the start of a string, marks reordered across variation selectors)
/// can fold differently.
enum PostgresFunctions {
    /// The version of the folding tables, recorded in the function's comment.
    static let version = "fold-1"

    /// The statements that create the functions (in the current schema).
    static var creationStatements: [String] { tables.statements + PostgresUpdateCompiler.functionStatements }

    private static let tables = FoldingTables()

    private struct FoldingTables {
        let statements: [String]

        init() {
            var caseSingle: [(Unicode.Scalar, Unicode.Scalar)] = []
            var caseMultiple: [(Unicode.Scalar, String)] = []
            var marks: [UInt32] = []
            var extenders: [UInt32] = []
            var lowBases: [UInt32] = []
            var scalars: [Unicode.Scalar] = []
            for value in UInt32(1)...0x10FFFF {
                guard let scalar = Unicode.Scalar(value) else { continue }
                switch scalar.properties.generalCategory {
                case .unassigned, .privateUse, .surrogate: continue
                default: scalars.append(scalar)
                }
            }
            for scalar in scalars {
                let text = String(scalar)
                let folded = text.folding(options: [.caseInsensitive], locale: nil)
                if folded != text {
                    let foldedScalars = Array(folded.unicodeScalars)
                    if foldedScalars.count == 1 {
                        caseSingle.append((scalar, foldedScalars[0]))
                    } else {
                        caseMultiple.append((scalar, folded))
                    }
                }
                var withBase = "a"
                withBase.unicodeScalars.append(scalar)
                let isMark = withBase.folding(options: [.diacriticInsensitive], locale: nil) == "a"
                let properties = scalar.properties
                let isExtender = isMark || properties.isGraphemeExtend || properties.generalCategory == .spacingMark
                    || scalar.value == 0x200D
                if isMark { marks.append(scalar.value) }
                if isExtender { extenders.append(scalar.value) }
                if !isExtender && scalar.value < 0x510 { lowBases.append(scalar.value) }
            }
            let lowMarks = marks.filter { $0 < 0x510 }
            let markClass = Self.bracket(marks)
            let strip =
                "regexp_replace(regexp_replace(t, '(?<=\(Self.bracket(lowBases))\(Self.bracket(extenders))*)\(markClass)', '', 'g'), '(?<=.)\(Self.bracket(lowMarks))', '', 'g')"
            var casefold = "translate(t, '\(Self.literal(caseSingle.map { String($0.0) }.joined()))', '\(Self.literal(caseSingle.map { String($0.1) }.joined()))')"
            for (scalar, folded) in caseMultiple {
                casefold = "replace(\(casefold), '\(Self.literal(String(scalar)))', '\(Self.literal(folded))')"
            }
            statements = [
                "CREATE FUNCTION strata_casefold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT \(casefold) $strata$",
                "CREATE FUNCTION strata_strip(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT \(strip) $strata$",
                """
                CREATE FUNCTION strata_fold(t text, options integer) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT CASE \
                WHEN octet_length(t) = char_length(t) THEN CASE WHEN options & 1 = 1 THEN lower(t COLLATE "C") ELSE t END \
                WHEN options = 1 THEN normalize(strata_casefold(t), NFC) \
                WHEN options = 2 THEN normalize(strata_strip(normalize(t, NFD)), NFC) \
                WHEN options = 3 THEN normalize(strata_casefold(strata_strip(normalize(t, NFD))), NFC) \
                ELSE t END COLLATE "C" $strata$
                """,
                "COMMENT ON FUNCTION strata_fold(text, integer) IS 'Strata \(PostgresFunctions.version): [c]/[d] folding as Swift Foundation folds'",
            ]
        }

        /// A bracket expression of scalars, as ranges (`[\u0300-\u036F…]`).
        static func bracket(_ values: [UInt32]) -> String {
            var ranges: [(UInt32, UInt32)] = []
            for value in values.sorted() {
                if let last = ranges.last, last.1 + 1 == value {
                    ranges[ranges.count - 1].1 = value
                } else {
                    ranges.append((value, value))
                }
            }
            func escaped(_ value: UInt32) -> String {
                value <= 0xFFFF
                    ? "\\u" + String(format: "%04X", value)
                    : "\\U" + String(format: "%08X", value)
            }
            return "[" + ranges.map { $0 == $1 ? escaped($0) : escaped($0) + "-" + escaped($1) }.joined() + "]"
        }

        /// Text for a standard SQL string literal.
        static func literal(_ text: String) -> String {
            text.replacingOccurrences(of: "'", with: "''")
        }
    }
}
