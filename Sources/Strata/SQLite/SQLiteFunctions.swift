import Foundation
import GRDB

/// The functions and collations every Strata SQLite connection registers, so that SQL gives
/// predicates and sort descriptors the meaning the in-memory evaluator gives them (both call
/// the same Swift code: ``StringFolding``, ``StringMatching``, ``ValueComparison``).
enum SQLiteFunctions {
    static let decimalCollation = "strata_decimal"
    static let caseInsensitiveCollation = "strata_nocase"
    static let localizedCollation = "strata_localized"

    static func register(in db: Database) {
        db.add(function: checkedValue)
        db.add(function: fold)
        db.add(function: endsWith)
        db.add(function: like)
        db.add(function: matches)
        db.add(
            function: DatabaseFunction("strata_decimal_sum", argumentCount: 1, pure: true, aggregate: DecimalSum.self))
        db.add(
            function: DatabaseFunction(
                "strata_decimal_avg", argumentCount: 1, pure: true, aggregate: DecimalAverage.self))
        db.add(
            function: DatabaseFunction(
                "strata_integer_sum", argumentCount: 1, pure: true, aggregate: IntegerSumAggregate.self))
        db.add(
            function: DatabaseFunction(
                "strata_integer_avg", argumentCount: 1, pure: true, aggregate: IntegerAverageAggregate.self))
        db.add(
            function: DatabaseFunction(
                "strata_double_sum", argumentCount: 1, pure: true, aggregate: DoubleSumAggregate.self))
        db.add(
            function: DatabaseFunction(
                "strata_double_avg", argumentCount: 1, pure: true, aggregate: DoubleAverageAggregate.self))
        db.add(collation: DatabaseCollation(decimalCollation) { SortOrdering.compareDecimalText($0, $1) })
        db.add(
            collation: DatabaseCollation(caseInsensitiveCollation) { SortOrdering.compare($0, $1, .caseInsensitive) })
        db.add(collation: DatabaseCollation(localizedCollation) { SortOrdering.compare($0, $1, .localizedStandard) })
    }

    /// The prefix of the errors ``checkedValue`` raises.
    static let checkFailure = "strata_checked: "

    /// `strata_checked(value, integer, nullable, minimum, maximum)`: the value a batch update
    /// computed, when it fits its attribute — an integer (when `integer` is 1) within
    /// `minimum...maximum`, or a number — and is not NULL unless `nullable` is 1. Anything else
    /// fails the statement, so that arithmetic never stores NULL in a non-optional attribute, a
    /// real in an integer one, or an integer out of its type's range.
    static let checkedValue = DatabaseFunction("strata_checked", argumentCount: 5, pure: true) { values in
        let nullable = Int64.fromDatabaseValue(values[2]) == 1
        switch values[0].storage {
        case .null:
            guard nullable else {
                throw DatabaseError(message: checkFailure + "missing value: the result is NULL (a division by zero?)")
            }
            return nil
        case .int64(let number):
            let minimum = Int64.fromDatabaseValue(values[3]) ?? .min
            let maximum = Int64.fromDatabaseValue(values[4]) ?? .max
            guard number >= minimum, number <= maximum else {
                throw DatabaseError(message: checkFailure + "out of range: \(number) is not in \(minimum)...\(maximum)")
            }
            return number
        case .double(let number):
            guard Int64.fromDatabaseValue(values[1]) != 1 else {
                throw DatabaseError(message: checkFailure + "type: \(number) is not an integer (an integer overflow?)")
            }
            return number
        default:
            throw DatabaseError(message: checkFailure + "type: the result is not a number")
        }
    }

    private static func string(_ value: DatabaseValue) -> String? {
        String.fromDatabaseValue(value)
    }

    static let fold = DatabaseFunction("strata_fold", argumentCount: 2, pure: true) { values in
        guard let text = string(values[0]), let options = Int.fromDatabaseValue(values[1]) else { return nil }
        return StringFolding.fold(text, ComparisonOptions(rawValue: UInt8(truncatingIfNeeded: options)))
    }

    static let endsWith = DatabaseFunction("strata_ends_with", argumentCount: 2, pure: true) { values in
        guard let text = string(values[0]), let suffix = string(values[1]) else { return nil }
        return StringMatching.endsWith(text, suffix)
    }

    static let like = DatabaseFunction("strata_like", argumentCount: 2, pure: true) { values in
        guard let text = string(values[0]), let pattern = string(values[1]) else { return nil }
        return StringMatching.like(text, pattern)
    }

    static let matches = DatabaseFunction("strata_matches", argumentCount: 3, pure: true) { values in
        guard let text = string(values[0]), let pattern = string(values[1]),
            let options = Int.fromDatabaseValue(values[2])
        else {
            return nil
        }
        return try StringMatching.matches(
            text, pattern, options: ComparisonOptions(rawValue: UInt8(truncatingIfNeeded: options)))
    }

    /// Exact sum of decimal text values; 0 for no rows, as `@sum` and `sum` promise.
    struct DecimalSum: DatabaseAggregate {
        var total = Decimal(0)
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if let value = SortOrdering.decimal(dbValues[0]) { total += value }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? { total.description }
    }

    /// Exact average of decimal text values; `NULL` for no rows.
    struct DecimalAverage: DatabaseAggregate {
        var total = Decimal(0)
        var count = 0
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if let value = SortOrdering.decimal(dbValues[0]) {
                total += value
                count += 1
            }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? {
            count == 0 ? nil : (total / Decimal(count)).description
        }
    }
}

extension SQLiteFunctions {
    /// `@sum` of integers: exact even when the sum leaves `Int64`'s range on the way (SQLite's
    /// `SUM` fails then), a `REAL` when it ends beyond it; 0 for no rows. See ``IntegerSum``.
    struct IntegerSumAggregate: DatabaseAggregate {
        var sum = IntegerSum()
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if case .int64(let number) = dbValues[0].storage { sum.add(number) }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? { SQLiteValueCoding.databaseValue(sum.sum) }
    }

    /// `@avg` of integers from their exact sum (SQLite's `AVG` adds them as doubles, in row
    /// order); `NULL` for no rows. See ``IntegerSum``.
    struct IntegerAverageAggregate: DatabaseAggregate {
        var sum = IntegerSum()
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if case .int64(let number) = dbValues[0].storage { sum.add(number) }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? { SQLiteValueCoding.databaseValue(sum.average) }
    }

    /// `@sum` of doubles, exact and rounded once, so the same for any order of the rows (SQLite's
    /// `TOTAL` rounds after every row); 0.0 for no rows, `NULL` for NaN. See ``DoubleSum``.
    struct DoubleSumAggregate: DatabaseAggregate {
        var sum = DoubleSum()
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if let number = SQLiteFunctions.double(dbValues[0]) { sum.add(number) }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? { SQLiteValueCoding.databaseValue(sum.sum) }
    }

    /// `@avg` of doubles from their exact sum; `NULL` for no rows or NaN. See ``DoubleSum``.
    struct DoubleAverageAggregate: DatabaseAggregate {
        var sum = DoubleSum()
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) throws {
            if let number = SQLiteFunctions.double(dbValues[0]) { sum.add(number) }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? { SQLiteValueCoding.databaseValue(sum.average) }
    }

    /// A `REAL` (or an `INTEGER`, which a `REAL` column holds when another program wrote one).
    private static func double(_ value: DatabaseValue) -> Double? {
        switch value.storage {
        case .double(let number): number
        case .int64(let number): Double(number)
        default: nil
        }
    }
}

extension SortOrdering {
    /// A column value as a decimal, for the exact decimal aggregates.
    static func decimal(_ value: DatabaseValue) -> Decimal? {
        switch value.storage {
        case .int64(let number): return Decimal(number)
        case .double(let number):
            return AttributeValue.double(number).converted(to: .decimal).flatMap(ValueComparison.decimal)
        case .string(let text): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        default: return nil
        }
    }
}
