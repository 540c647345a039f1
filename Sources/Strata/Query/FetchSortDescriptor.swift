import Foundation

/// How a sort descriptor compares strings.
public enum SortComparison: String, Sendable, Hashable, CaseIterable {
    /// By Unicode scalar values (SQLite's `BINARY`): "B" before "a", "a10" before "a9".
    case standard
    /// Case-folded first ("a" and "A" together), then by scalar values.
    case caseInsensitive
    /// As the Finder sorts: case- and diacritic-insensitive, numbers by value ("a9" before "a10").
    case localizedStandard
}

/// One sort key of a fetch: a key path, a direction and a string comparison.
///
/// The key is an attribute of the fetched entity or of an object reached through to-one
/// relationships (`"director.name"`). Objects with no value (`nil`, or an empty relationship on
/// the way) sort **before** every value in ascending order and after every value in descending
/// order, as in Core Data's SQLite store. Objects that tie on every key keep the order they were
/// saved in (inserted, unsaved objects after saved ones).
public struct QuerySortDescriptor: Sendable, Hashable {
    /// The dotted key path to sort by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: SortComparison

    /// Creates a sort descriptor for a key.
    ///
    /// For example:
    ///
    /// ```swift
    /// let byDirector = QuerySortDescriptor(key: "director.name", comparison: .localizedStandard)
    /// ```
    public init(key: String, ascending: Bool = true, comparison: SortComparison = .standard) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }
}

/// A sort key for the objects of one model class.
///
/// ```swift
/// let newestFirst: [FetchSortDescriptor<Movie>] = [.descending(\.releaseDate), .ascending(\.title, comparison: .localizedStandard)]
/// let byDirector = FetchSortDescriptor<Movie>(key: "director.name")
/// ```
public struct FetchSortDescriptor<Model: EntityModel>: Sendable, Hashable {
    /// The untyped descriptor that stores receive.
    public var descriptor: QuerySortDescriptor

    /// The key the descriptor sorts by (`NSSortDescriptor.key`).
    public var key: String { descriptor.key }
    /// Whether smaller values come first (`NSSortDescriptor.ascending`).
    public var ascending: Bool { descriptor.ascending }

    /// Creates a sort descriptor from a key (a dotted key path through to-one relationships).
    ///
    /// For example:
    ///
    /// ```swift
    /// let byDirector = FetchSortDescriptor<Movie>(key: "director.name", ascending: false)
    /// ```
    public init(key: String, ascending: Bool = true, comparison: SortComparison = .standard) {
        descriptor = QuerySortDescriptor(key: key, ascending: ascending, comparison: comparison)
    }

    /// Creates a sort descriptor from a key path such as `\Movie.title` or `\Movie.director?.name`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let byDirector = FetchSortDescriptor(\Movie.director?.name, comparison: .caseInsensitive)
    /// ```
    public init<Value>(_ keyPath: KeyPath<Model, Value>, ascending: Bool = true, comparison: SortComparison = .standard)
    {
        self.init(key: KeyPathNames.name(of: keyPath, root: Model.self), ascending: ascending, comparison: comparison)
    }

    /// Smaller values first.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title, comparison: .localizedStandard)])
    /// ```
    public static func ascending<Value>(_ keyPath: KeyPath<Model, Value>, comparison: SortComparison = .standard)
        -> Self
    {
        Self(keyPath, ascending: true, comparison: comparison)
    }

    /// Larger values first.
    ///
    /// For example:
    ///
    /// ```swift
    /// let newestFirst = FetchRequest<Movie>(sortDescriptors: [.descending(\.releaseDate)])
    /// ```
    public static func descending<Value>(_ keyPath: KeyPath<Model, Value>, comparison: SortComparison = .standard)
        -> Self
    {
        Self(keyPath, ascending: false, comparison: comparison)
    }
}
