import Foundation

// MARK: - Replacing builders (the kits' meaning)

/// Chainable builders with the kits' meanings: each one **sets** the predicate or the sort
/// descriptors, replacing what the request had, as the data-stack kit's `where(_:)`/`sorted(_:)`
/// and the stack kit's `configured(with:)`, `fetchingBy…`, `fetchingFor…` and `sortedBy…` do.
/// The forms that **add** to the request say so: ``andWhere(_:)`` and ``thenSorted(by:)``.
///
/// ```swift
/// let request = FetchRequest<Person>()
///     .fetchingFor(key: "jobTitle", values: ["Senior", "Lead"])   // the predicate
///     .sortedBy(key: "yearsOfExperience")                          // the sort
/// let people = try request.execute(with: context)
///
/// let teenagers = FetchRequest<Person>().where(\.age >= 13).andWhere(\.age < 20)
/// ```
extension FetchRequest {
    /// The request with `predicate` as its predicate, replacing any other (the data-stack kit's
    /// `where(_:)`). Add to the predicate with ``andWhere(_:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let nineties = FetchRequest<Movie>().where((\Movie.year).between(1990...1999))
    /// ```
    public func `where`(_ predicate: FetchPredicate<Model>) -> Self {
        configured(with: predicate)
    }

    /// The request with `predicate` added to its predicate with `AND`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let recent = FetchRequest<Movie>().where(\.year >= 1990).andWhere(\.rating > 4)
    /// ```
    public func andWhere(_ predicate: FetchPredicate<Model>) -> Self {
        var copy = self
        copy.predicate = self.predicate.map { $0 && predicate } ?? predicate
        return copy
    }

    /// The request sorted by `descriptors`, replacing any other sort (the data-stack kit's
    /// `sorted(_:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let sorting: [FetchSortDescriptor<Person>] = [.ascending(\.lastName), .descending(\.age)]
    /// let request = FetchRequest<Person>().sorted(sorting)
    /// ```
    public func sorted(_ descriptors: [FetchSortDescriptor<Model>]) -> Self {
        configured(with: descriptors)
    }

    /// The request sorted by `descriptors`, replacing any other sort.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>().sorted(by: .descending(\.rating), .ascending(\.title))
    /// ```
    public func sorted(by descriptors: FetchSortDescriptor<Model>...) -> Self {
        configured(with: descriptors)
    }

    /// The request with `descriptors` after its own sort descriptors: ties of the existing
    /// sort are broken by these.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>().sorted(by: .descending(\.year)).thenSorted(by: .ascending(\.title))
    /// ```
    public func thenSorted(by descriptors: FetchSortDescriptor<Model>...) -> Self {
        var copy = self
        copy.sortDescriptors += descriptors
        return copy
    }

    /// The request with `predicate` as its predicate; `nil` fetches everything (the stack kit's
    /// `configured(with:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let recent = Movie.makeFetchRequest().configured(with: \Movie.year >= 1990)
    /// ```
    public func configured(with predicate: FetchPredicate<Model>?) -> Self {
        var copy = self
        copy.configureWith(predicate: predicate)
        return copy
    }

    /// The request with `sortDescriptors` as its sort (the stack kit's `configured(with:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let byTitle = Movie.makeFetchRequest().configured(with: [.ascending(\Movie.title)])
    /// ```
    public func configured(with sortDescriptors: [FetchSortDescriptor<Model>]) -> Self {
        var copy = self
        copy.configureWith(sortDescriptors: sortDescriptors)
        return copy
    }

    /// Sets the predicate; `nil` fetches everything (the stack kit's `configureWith(predicate:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = FetchRequest<Movie>()
    /// request.configureWith(predicate: \.rating >= 4)
    /// ```
    public mutating func configureWith(predicate: FetchPredicate<Model>?) {
        self.predicate = predicate
    }

    /// Sets the sort descriptors (the stack kit's `configureWith(sortDescriptors:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = FetchRequest<Movie>()
    /// request.configureWith(sortDescriptors: [.descending(\.releaseDate)])
    /// ```
    public mutating func configureWith(sortDescriptors: [FetchSortDescriptor<Model>]) {
        self.sortDescriptors = sortDescriptors
    }
}

// MARK: - String-key builders (the stack kit)

/// The stack kit's string-key builders. Each sets the request's predicate (or sort),
/// replacing the one it had; with an empty list of keys, pairs or values the request is
/// returned unchanged, as in the kit.
///
/// Values that cannot equal a key's attribute (a number for a string attribute, say) match
/// nothing, as in Core Data, instead of failing the fetch: `fetchingFor(keys: ["name", "age"],
/// values: ["Sam", 30])` finds people named Sam and people aged 30. (Format strings and key-path
/// predicates report such a comparison as ``StrataError/Code/typeMismatch``: written by hand, it
/// is a mistake.)
extension FetchRequest {
    /// The request for every object: no predicate (the stack kit's `fetchingAll()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let everything = FetchRequest<Movie>(predicate: \.year >= 1990).fetchingAll()   // no predicate
    /// ```
    public func fetchingAll() -> Self {
        configured(with: nil as FetchPredicate<Model>?)
    }

    /// Objects whose `key` equals `value`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let johns = try FetchRequest<Person>().fetchingBy(key: "name", value: "John").execute(with: context)
    /// ```
    public func fetchingBy(key: String, value: any PredicateArgument) -> Self {
        configured(with: FetchPredicate(Self.equal(key, value.predicateExpression)))
    }

    /// Objects where every key equals its value (`AND`; the kit's pairs are a dictionary).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Person>().fetchingBy(pairs: ["name": "John", "country": "Canada"])
    /// ```
    public func fetchingBy(pairs: [String: any PredicateArgument]) -> Self {
        fetchingBy(pairs: pairs.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
    }

    /// Objects where every key equals its value, for pairs gathered at run time as `Any`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let pairs: [String: Any] = ["title": "Heat", "year": 1995]
    /// let request = try FetchRequest<Movie>().fetchingBy(pairs: pairs)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` naming a value that cannot be a
    ///   predicate value (a type Strata does not store).
    public func fetchingBy(pairs: [String: Any]) throws -> Self {
        try fetchingBy(
            pairs: pairs.sorted { $0.key < $1.key }.map { (key: $0.key, value: try PredicateArguments.argument(from: $0.value)) })
    }

    /// Objects where every key equals its value, in the order given (`AND`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>().fetchingBy(pairs: [(key: "title", value: "Heat"), (key: "year", value: 1995)])
    /// ```
    public func fetchingBy(pairs: [(key: String, value: any PredicateArgument)]) -> Self {
        guard !pairs.isEmpty else { return self }
        return configured(with: FetchPredicate(.and(pairs.map { Self.equal($0.key, $0.value.predicateExpression) })))
    }

    /// Objects where every one of `keys` equals `value` (`AND`).
    ///
    /// For example:
    ///
    /// ```swift
    /// // Ivanov Ivanov, not Tenio Ivanov:
    /// let request = FetchRequest<Person>().fetchingBy(keys: ["firstName", "lastName"], value: "Ivanov")
    /// ```
    public func fetchingBy(keys: [String], value: any PredicateArgument) -> Self {
        guard !keys.isEmpty else { return self }
        return configured(with: FetchPredicate(.and(keys.map { Self.equal($0, value.predicateExpression) })))
    }

    /// Objects where at least one of `keys` equals `value` (`OR`).
    ///
    /// For example:
    ///
    /// ```swift
    /// // Ivanov Ivanov and Tenio Ivanov:
    /// let request = FetchRequest<Person>().fetchingFor(keys: ["firstName", "lastName"], value: "Ivanov")
    /// ```
    public func fetchingFor(keys: [String], value: any PredicateArgument) -> Self {
        guard !keys.isEmpty else { return self }
        return configured(with: FetchPredicate(.or(keys.map { Self.equal($0, value.predicateExpression) })))
    }

    /// Objects whose `key` equals one of `values` (`IN`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let seniors = FetchRequest<Person>().fetchingFor(key: "jobTitle", values: ["Senior", "Lead"])
    /// ```
    public func fetchingFor(key: String, values: [any PredicateArgument]) -> Self {
        guard !values.isEmpty else { return self }
        return configured(with: FetchPredicate(Self.member(key, values.map(\.predicateExpression))))
    }

    /// Objects whose `key` equals one of `values`, gathered at run time as `Any`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let years: [Any] = [1995, 1998]
    /// let request = try FetchRequest<Movie>().fetchingFor(key: "year", values: years)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` naming a value that cannot be a
    ///   predicate value.
    public func fetchingFor(key: String, values: [Any]) throws -> Self {
        fetchingFor(key: key, values: try values.map { try PredicateArguments.argument(from: $0) })
    }

    /// Objects where at least one of `keys` equals one of `values`.
    ///
    /// For example:
    ///
    /// ```swift
    /// // Sam by name or nickname, or anyone aged 30:
    /// let request = FetchRequest<Person>().fetchingFor(keys: ["name", "nickname", "age"], values: ["Sam", 30])
    /// ```
    public func fetchingFor(keys: [String], values: [any PredicateArgument]) -> Self {
        guard !keys.isEmpty, !values.isEmpty else { return self }
        let list = values.map(\.predicateExpression)
        return configured(with: FetchPredicate(.or(keys.map { Self.member($0, list) })))
    }

    /// Objects where at least one of `keys` equals one of `values`, gathered at run time.
    ///
    /// For example:
    ///
    /// ```swift
    /// let values: [Any] = ["Heat", 1995]
    /// let request = try FetchRequest<Movie>().fetchingFor(keys: ["title", "year"], values: values)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` naming a value that cannot be a
    ///   predicate value.
    public func fetchingFor(keys: [String], values: [Any]) throws -> Self {
        fetchingFor(keys: keys, values: try values.map { try PredicateArguments.argument(from: $0) })
    }

    /// The request sorted by `key` alone, replacing any other sort (the stack kit's
    /// `sortedBy(key:ascending:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let newestFirst = FetchRequest<Movie>().sortedBy(key: "releaseDate", ascending: false)
    /// ```
    public func sortedBy(key: String, ascending: Bool = true) -> Self {
        configured(with: [FetchSortDescriptor(key: key, ascending: ascending)])
    }

    /// The request sorted by `keys`, all in one direction, replacing any other sort.
    ///
    /// For example:
    ///
    /// ```swift
    /// let byName = FetchRequest<Person>().sortedBy(keys: ["lastName", "firstName"])
    /// ```
    public func sortedBy(keys: [String], ascending: Bool = true) -> Self {
        configured(with: keys.map { FetchSortDescriptor(key: $0, ascending: ascending) })
    }

    /// The request with `key` after its own sort descriptors.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>().sortedBy(key: "year", ascending: false).thenSortedBy(key: "title")
    /// ```
    public func thenSortedBy(key: String, ascending: Bool = true) -> Self {
        var copy = self
        copy.sortDescriptors.append(FetchSortDescriptor(key: key, ascending: ascending))
        return copy
    }

    /// `key == value`, matching nothing where the value cannot equal the attribute.
    static func equal(_ key: String, _ value: QueryExpression) -> QueryPredicate {
        var comparison = QueryComparison(.keyPath(key), .equalTo, value)
        comparison.typeMismatchMatchesNothing = true
        return .comparison(comparison)
    }

    /// `key IN values`, leaving out values that cannot equal the attribute.
    static func member(_ key: String, _ values: [QueryExpression]) -> QueryPredicate {
        var comparison = QueryComparison(.keyPath(key), .in, .list(values))
        comparison.typeMismatchMatchesNothing = true
        return .comparison(comparison)
    }
}

// MARK: - Static forms

extension FetchRequest {
    /// A request for every object of the class (the stack kit's `fetchingAll()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let movies = try FetchRequest<Movie>.fetchingAll().execute(with: context)
    /// ```
    public static func fetchingAll() -> Self { Self() }

    /// A request for objects whose `key` equals `value`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let heat = try FetchRequest<Movie>.fetchingBy(key: "title", value: "Heat").execute(with: context)
    /// ```
    public static func fetchingBy(key: String, value: any PredicateArgument) -> Self {
        Self().fetchingBy(key: key, value: value)
    }

    /// A request for objects where every key equals its value (`AND`), in the order given.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>.fetchingBy(pairs: [(key: "title", value: "Heat"), (key: "year", value: 1995)])
    /// ```
    public static func fetchingBy(pairs: [(key: String, value: any PredicateArgument)]) -> Self {
        Self().fetchingBy(pairs: pairs)
    }

    /// A request for objects where every one of `keys` equals `value` (`AND`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Person>.fetchingBy(keys: ["firstName", "lastName"], value: "Ivanov")
    /// ```
    public static func fetchingBy(keys: [String], value: any PredicateArgument) -> Self {
        Self().fetchingBy(keys: keys, value: value)
    }

    /// A request for objects where at least one of `keys` equals `value` (`OR`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Person>.fetchingFor(keys: ["firstName", "lastName"], value: "Ivanov")
    /// ```
    public static func fetchingFor(keys: [String], value: any PredicateArgument) -> Self {
        Self().fetchingFor(keys: keys, value: value)
    }

    /// A request for objects whose `key` equals one of `values` (`IN`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>.fetchingFor(key: "title", values: ["Heat", "Ronin"])
    /// ```
    public static func fetchingFor(key: String, values: [any PredicateArgument]) -> Self {
        Self().fetchingFor(key: key, values: values)
    }

    /// A request for objects where at least one of `keys` equals one of `values`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Person>.fetchingFor(keys: ["firstName", "lastName"], values: ["Geno", "Ivanov"])
    /// ```
    public static func fetchingFor(keys: [String], values: [any PredicateArgument]) -> Self {
        Self().fetchingFor(keys: keys, values: values)
    }
}

// MARK: - Predicate collections

/// How `joined(with:)` on a collection of predicates combines them (Core Data's
/// `NSCompoundPredicate.LogicalType`).
public enum PredicateJoin: Sendable, Hashable {
    /// Every predicate holds; an empty collection matches everything.
    case and
    /// At least one predicate holds; an empty collection matches nothing.
    case or
}

extension Sequence {
    /// The predicates combined with `AND` or `OR` (Core Data's `NSCompoundPredicate`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let filters: [FetchPredicate<Movie>] = [\.year >= 1990, \.rating > 4]
    /// let request = FetchRequest<Movie>().where(filters.joined(with: .and))
    /// ```
    ///
    /// An empty collection joined with `AND` matches every object, with `OR` none, as Core
    /// Data's compound predicates do.
    public func joined<Model>(with join: PredicateJoin) -> FetchPredicate<Model>
    where Element == FetchPredicate<Model> {
        let trees = map(\.tree)
        switch join {
        case .and: return trees.isEmpty ? .always : FetchPredicate(.and(trees.flatMap(\.conjuncts)))
        case .or: return trees.isEmpty ? .never : FetchPredicate(.or(trees.flatMap(\.disjuncts)))
        }
    }
}

extension ComparisonOptions {
    /// `[cd]`: case and diacritics are both ignored ("Émile" matches "emile").
    public static let caseAndDiacriticInsensitive: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
}
