import Foundation

/// A function that turns many values into one, computed by the store.
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    /// The number of rows (or of non-nil values, with a key).
    case count
    /// The sum of the values (0 for no rows); exact for decimals.
    case sum
    /// The average of the values (`nil` for no rows); exact for decimals, a `Double` otherwise.
    case average
    /// The smallest value (`nil` for no rows).
    case min
    /// The largest value (`nil` for no rows).
    case max
}

/// One column of a values fetch: an attribute, or a function over the matching rows.
///
/// ```swift
/// let columns: [ResultColumn] = [.property("director.name"), .aggregate(.sum, "boxOffice"), .aggregate(.count, nil)]
/// ```
public enum ResultColumn: Sendable, Hashable {
    /// An attribute, directly or through to-one relationships (`"director.name"`).
    case property(String)
    /// A function over the matching rows (or over each group): `count` with a `nil` key
    /// counts rows.
    case aggregate(AggregateFunction, String?)
}
