import Foundation

/// A predicate on the objects of one model class: a ``QueryPredicate`` tree that knows the
/// type it filters.
///
/// Build one with key-path operators, from a format string, or from Foundation's
/// `#Predicate`; combine them with `&&`, `||` and `!`:
///
/// ```swift
/// let recent: FetchPredicate<Movie> = \.year >= 1990 && (\Movie.title).beginsWith("the", options: .caseInsensitive)
/// let text = try FetchPredicate<Movie>(format: "year >= %d AND reviews.@count > 3", 1990)
/// let both = recent || text
/// ```
///
/// Predicates are `Sendable` values: build them anywhere and pass them to any context.
public struct FetchPredicate<Model: EntityModel>: Sendable, Hashable {
    /// The expression tree.
    public var tree: QueryPredicate

    /// Wraps an expression tree.
    ///
    /// For example:
    ///
    /// ```swift
    /// let tree: QueryPredicate = .comparison(.keyPath("year"), .greaterThanOrEqualTo, .value(1990))
    /// let predicate = FetchPredicate<Movie>(tree)
    /// ```
    public init(_ tree: QueryPredicate) {
        self.tree = tree
    }

    /// Matches every object (`TRUEPREDICATE`).
    public static var always: FetchPredicate { FetchPredicate(.constant(true)) }
    /// Matches no object (`FALSEPREDICATE`). (Not `none`, which an optional predicate
    /// parameter would read as `Optional.none`: no filter at all.)
    public static var never: FetchPredicate { FetchPredicate(.constant(false)) }

    /// Both predicates hold.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.and(lhs.tree.conjuncts + rhs.tree.conjuncts))
    }

    /// At least one of the predicates holds.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.or(lhs.tree.disjuncts + rhs.tree.disjuncts))
    }

    /// The predicate does not hold.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.not(predicate.tree))
    }
}

extension QueryPredicate {
    /// The operands of an `AND`, or the predicate itself.
    var conjuncts: [QueryPredicate] {
        if case .and(let parts) = self { return parts }
        return [self]
    }

    /// The operands of an `OR`, or the predicate itself.
    var disjuncts: [QueryPredicate] {
        if case .or(let parts) = self { return parts }
        return [self]
    }
}
