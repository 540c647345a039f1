import Foundation

extension FetchPredicate {
    /// Translates a Foundation `#Predicate` into a Strata predicate.
    ///
    /// Write predicates with the same macro SwiftData uses; Strata walks the macro's expression
    /// tree once, here, and keeps the resulting ``QueryPredicate``. Stores then compile it to SQL
    /// and contexts evaluate it in memory, like any other predicate.
    ///
    /// For example:
    ///
    /// ```swift
    /// let minimumStars: Int32 = 4
    /// let predicate = try FetchPredicate(#Predicate<Movie> { movie in
    ///     movie.year >= 1990
    ///         && movie.title.starts(with: "The")
    ///         && (movie.director?.name ?? "") != ""
    ///         && movie.reviews.contains { $0.stars >= minimumStars }
    /// })
    /// // year >= 1990 AND title BEGINSWITH "The" AND director.name != nil AND director.name != ""
    /// //   AND ANY reviews.stars >= 4
    /// ```
    ///
    /// What translates, and to what:
    ///
    /// - Stored attributes and relationships of `@Entity` classes, chained through to-one
    ///   relationships (`$0.director?.name`, `$0.director.flatMap { $0.name }`, `$0.director!.name`
    ///   all become `director.name`); `objectID` names the object itself, so
    ///   `$0.director?.objectID == id` compares the related object with an ``ObjectID``.
    /// - `count` and `isEmpty` of a to-many relationship (`reviews.@count`, `reviews.@count == 0`);
    ///   `isEmpty` of a string (`title == ""`).
    /// - Constants of every ``PredicateArgument`` type, arrays and sets of them, `Character`,
    ///   ranges, and `nil`; arithmetic between constants is computed here.
    /// - `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, and `? :` (`(c AND a) OR (NOT c AND b)`).
    /// - `a ?? b` compared with a value: `(a ?? b) == v` becomes `(a == v) OR (a == nil AND b == v)`;
    ///   other comparisons also require `a != nil` in the first branch. Parts that compare two
    ///   constants are folded away, so `($0.director?.name ?? "") == "Mann"` is `director.name == "Mann"`.
    ///   `? :` on other values is distributed the same way:
    ///   `(c ? a : b) == v` becomes `(c AND a == v) OR (NOT c AND b == v)`.
    /// - A force unwrap (`$0.director!.name`) reads like optional chaining: a missing object
    ///   matches no comparison with a value, instead of trapping.
    /// - Strings: `contains(_:)` (`CONTAINS`), `starts(with:)` (`BEGINSWITH`); on Apple platforms
    ///   also `localizedStandardContains(_:)` (`CONTAINS[cd]`) and `caseInsensitiveCompare(_:)`
    ///   compared with a `ComparisonResult` (`==[c]`, `<[c]`, `>[c]`, …).
    /// - Constant collections and ranges: `[1, 2].contains($0.year)` (`IN`),
    ///   `(1990...1999).contains($0.year)` (`BETWEEN`).
    /// - To-many relationships: `contains(where:)` (`ANY` for a single comparison, otherwise
    ///   `SUBQUERY(...).@count > 0`), `allSatisfy(_:)` (`ALL`, or `SUBQUERY(…, NOT …).@count == 0`;
    ///   true for an empty relationship), and `filter(_:)` followed by `count` or `isEmpty`
    ///   (`SUBQUERY(...).@count`). Closure parameters become subquery variables `$v1`, `$v2`, ….
    ///
    /// Not translated: type checks and casts (`is`, `as?`, `as!`), arithmetic on stored values,
    /// subscripts, regular expressions, `String.count`, `first`/`last`, `max()`/`min()`, locale-
    /// dependent comparisons (`localizedCompare`), references to the predicate's object from
    /// inside a `contains(where:)`, `allSatisfy` or `filter` closure, and properties that are not
    /// stored (computed properties, `@Transient` ones).
    ///
    /// Managed objects are not `Sendable`, so `#Predicate` cannot capture one; capture its
    /// ``ManagedObject/objectID`` instead and compare `objectID`s
    /// (`$0.reviews.contains { $0.objectID == reviewID }` becomes `reviews CONTAINS <id>`).
    ///
    /// The translation runs once, on the calling thread; it does not touch a context or store.
    /// Its cost is linear in the size of the predicate.
    ///
    /// - Parameter predicate: A predicate on objects of `Model`, usually written with `#Predicate`.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/unsupportedPredicate`` when the
    ///   predicate uses a construct Strata cannot translate (the message names it), or
    ///   ``StrataError/Code/unknownKey`` when it reads a property that is not a stored attribute
    ///   or relationship.
    public init(_ predicate: Foundation.Predicate<Model>) throws {
        var translator = FoundationPredicateTranslator(root: predicate.variable.key, modelName: "\(Model.self)")
        let fragment = try translator.fragment(for: predicate.expression)
        self.init(try translator.condition(fragment))
    }
}

// MARK: - Fragments

/// What one node of a Foundation predicate expression translates to.
indirect enum FoundationPredicatePart {
    /// A value: a constant, an object, a key path, a variable or a list.
    case value(QueryExpression)
    /// A Boolean condition.
    case condition(QueryPredicate)
    /// An optional Boolean (`$0.director.flatMap { $0.name == "x" }`): `nil` unless `present`.
    case optionalCondition(QueryPredicate, present: QueryPredicate)
    /// `value ?? fallback`.
    case coalesced(FoundationPredicatePart, fallback: FoundationPredicatePart)
    /// `test ? whenTrue : whenFalse` for non-Boolean values.
    case conditional(QueryPredicate, FoundationPredicatePart, FoundationPredicatePart)
    /// The members of a to-many relationship that pass a `filter`: a `.subquery` expression.
    case filtered(QueryExpression)
    /// A range of values; a `nil` bound is open.
    case range(lower: QueryExpression?, upper: QueryExpression?, includesUpper: Bool)
    /// The result of comparing two strings (`caseInsensitiveCompare`), before it is compared
    /// with a `ComparisonResult`.
    case stringOrdering(QueryExpression, QueryExpression, ComparisonOptions)
    /// A constant `ComparisonResult`.
    case ordering(ComparisonResult)
}
