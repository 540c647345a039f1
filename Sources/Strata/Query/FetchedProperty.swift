import Foundation

/// One column of a dictionary fetch: an attribute or an aggregate, with the name it gets in
/// each result dictionary (Core Data's `propertiesToFetch` with `NSExpressionDescription`).
///
/// ```swift
/// var request = FetchRequest<Movie>()
/// request.propertiesToFetch = [.attribute("director.name", as: "director"), .count(as: "movies"), .sum("boxOffice", as: "total")]
/// request.propertiesToGroupBy = ["director.name"]
/// request.havingPredicate = try QueryPredicate(format: "movies > 1")
/// let rows = try context.fetchDictionaries(request)   // [["director": "Ann", "movies": 4, "total": 10]]
/// ```
public struct FetchedProperty: Sendable, Hashable {
    /// The key of the column in result dictionaries.
    public var name: String
    /// What the store computes.
    public var column: ResultColumn

    /// An attribute, directly or through to-one relationships; named after its key path unless
    /// `name` is given.
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.attribute("title"), .attribute("director.name", as: "director")]
    /// ```
    public static func attribute(_ key: String, as name: String? = nil) -> FetchedProperty {
        FetchedProperty(name: name ?? key, column: .property(key))
    }

    /// An attribute named by a key path (`\Movie.title`).
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.attribute(\Movie.title), .attribute(\Movie.director?.name, as: "director")]
    /// ```
    public static func attribute<Model: EntityModel, Value>(_ keyPath: KeyPath<Model, Value>, as name: String? = nil)
        -> FetchedProperty
    {
        attribute(KeyPathNames.name(of: keyPath, root: Model.self), as: name)
    }

    /// The number of rows (of each group).
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = FetchRequest<Movie>()
    /// request.propertiesToFetch = [.attribute("year"), .count(as: "movies")]
    /// request.propertiesToGroupBy = ["year"]
    /// let perYear = try context.fetchDictionaries(request)   // [["year": 1995, "movies": 12], …]
    /// ```
    public static func count(as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.count, nil))
    }

    /// The number of non-nil values of an attribute.
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.count(as: "movies"), .count("releaseDate", as: "released")]
    /// ```
    public static func count(_ key: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.count, key))
    }

    /// The sum of an attribute (0 when there are no rows; exact for decimals).
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.attribute("director.name", as: "director"), .sum("boxOffice", as: "total")]
    /// request.propertiesToGroupBy = ["director.name"]
    /// ```
    public static func sum(_ key: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.sum, key))
    }

    /// The average of an attribute (`nil` when there are no rows).
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.attribute("year"), .average("rating", as: "averageRating")]
    /// request.propertiesToGroupBy = ["year"]
    /// ```
    public static func average(_ key: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.average, key))
    }

    /// The smallest value of an attribute.
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.min("releaseDate", as: "first"), .max("releaseDate", as: "latest")]
    /// ```
    public static func min(_ key: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.min, key))
    }

    /// The largest value of an attribute.
    ///
    /// For example:
    ///
    /// ```swift
    /// request.propertiesToFetch = [.attribute("year"), .max("rating", as: "best")]
    /// request.propertiesToGroupBy = ["year"]
    /// ```
    public static func max(_ key: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, column: .aggregate(.max, key))
    }
}
