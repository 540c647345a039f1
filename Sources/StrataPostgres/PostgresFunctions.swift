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
/// - `[d]` replaces each precomposed character whose base is below U+0510 (Latin, Greek,
///   Cyrillic…) by its base, removes the marks Foundation removes — every mark that follows
///   such a base, and the marks below U+0510 after any character — then composes;
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
    static var creationStatements: [String] {
        tables.statements + PostgresDialect.functionStatements + exactArithmeticStatements
    }

    /// Exact arithmetic on doubles, as Swift's `DoubleSum` and `IntegerSum` do it: every finite
    /// double is an exact `numeric` (its mantissa times a power of two, from tables of exact
    /// powers made by repeated multiplication: PostgreSQL's own `^` rounds large powers), sums
    /// of them are exact, and `strata_double` rounds the result once, to nearest, with
    /// infinities beyond the largest double and `NULL` for NaN.
    static let exactArithmeticStatements = [
        "CREATE TABLE \"_strata_pow2\" (n integer PRIMARY KEY, v numeric NOT NULL)",
        "INSERT INTO \"_strata_pow2\" WITH RECURSIVE p(n, v) AS (SELECT 0, 1::numeric UNION ALL SELECT n + 1, v * 2 FROM p WHERE n < 1024) SELECT n, v FROM p",
        "CREATE TABLE \"_strata_pow5\" (n integer PRIMARY KEY, v numeric NOT NULL)",
        "INSERT INTO \"_strata_pow5\" WITH RECURSIVE p(n, v) AS (SELECT 0, 1::numeric UNION ALL SELECT n + 1, v * 5 FROM p WHERE n < 1075) SELECT n, v FROM p",
        """
        CREATE FUNCTION strata_exact(x float8) RETURNS numeric LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $strata$ \
        DECLARE bits bigint; e integer; m numeric; r numeric; BEGIN \
        IF x = 'Infinity'::float8 OR x = '-Infinity'::float8 OR x = 'NaN'::float8 THEN RETURN x::numeric; END IF; \
        bits := ('x' || encode(float8send(x), 'hex'))::bit(64)::bigint; \
        e := ((bits >> 52) & 2047)::integer; m := (bits & 4503599627370495)::numeric; \
        IF e = 0 THEN e := 1; ELSE m := m + 4503599627370496; END IF; \
        e := e - 1075; \
        IF e >= 0 THEN r := m * (SELECT v FROM "_strata_pow2" WHERE n = e); \
        ELSE r := m * (SELECT v FROM "_strata_pow5" WHERE n = -e) * ('1e' || e)::numeric; END IF; \
        IF bits < 0 THEN r := -r; END IF; RETURN r; END $strata$
        """,
        """
        CREATE FUNCTION strata_double(x numeric) RETURNS float8 LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT CASE \
        WHEN x = 'NaN'::numeric THEN NULL \
        WHEN x >= 179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792 THEN 'Infinity'::float8 \
        WHEN x <= -179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792 THEN '-Infinity'::float8 \
        ELSE x::float8 END $strata$
        """,
    ]

    private static let tables = FoldingTables()

    private struct FoldingTables {
        let statements: [String]

        init() {
            var caseSingle: [(Unicode.Scalar, Unicode.Scalar)] = []
            var caseMultiple: [(Unicode.Scalar, String)] = []
            var marks: [UInt32] = []
            var extenders: [UInt32] = []
            var lowBases: [UInt32] = []
            // Precomposed characters whose base is below U+0510 stand for their base.
            var bases: [(Unicode.Scalar, Unicode.Scalar)] = []
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
                if let first = text.decomposedStringWithCanonicalMapping.unicodeScalars.first, first != scalar, first.value < 0x510 {
                    bases.append((scalar, first))
                }
            }
            let lowMarks = marks.filter { $0 < 0x510 }
            let markClass = Self.bracket(marks)
            let toBase =
                "translate(t, '\(Self.literal(bases.map { String($0.0) }.joined()))', '\(Self.literal(bases.map { String($0.1) }.joined()))')"
            let strip =
                "regexp_replace(regexp_replace(\(toBase), '(?<=\(Self.bracket(lowBases))\(Self.bracket(extenders))*)\(markClass)', '', 'g'), '(?<=.)\(Self.bracket(lowMarks))', '', 'g')"
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
                WHEN options = 2 THEN normalize(strata_strip(t), NFC) \
                WHEN options = 3 THEN normalize(strata_casefold(strata_strip(t)), NFC) \
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
