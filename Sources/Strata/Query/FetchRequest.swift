import Foundation

/// A description of which objects to fetch, in what order and how many: Core Data's
/// `NSFetchRequest`, typed by the model class.
///
/// ```swift
/// var request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.descending(\.releaseDate)])
/// request.fetchLimit = 20
/// let movies = try context.fetch(request)
///
/// // The same, built by chaining:
/// let same = FetchRequest<Movie>().where(\.year >= 1990).sorted(by: .descending(\.releaseDate)).limit(20)
/// ```
///
/// Requests are `Sendable` values; build them anywhere and run them on any context. Key paths
/// and values are checked when the request runs: an unknown key or a value of the wrong type
/// throws ``StrataError`` before the store is touched.
public struct FetchRequest<Model: EntityModel>: Sendable, Hashable {
    /// The entity whose objects are fetched (the model class's entity by default).
    public var entityName: String
    /// Which objects match; all of them when `nil`.
    public var predicate: FetchPredicate<Model>?
    /// The order of the results. Ties, and everything when there are none, keep the order the
    /// objects were saved in; unsaved inserted objects come after saved ones.
    public var sortDescriptors: [FetchSortDescriptor<Model>]
    /// At most this many results; 0 means no limit.
    public var fetchLimit: Int = 0
    /// Results to skip before the first one returned.
    public var fetchOffset: Int = 0
    /// Objects are loaded from the store this many at a time (0: all at once), so memory stays
    /// flat over huge results; see ``ObjectContext/fetchBatched(_:)``.
    public var fetchBatchSize: Int = 0
    /// Whether the context's unsaved changes count: matching inserted objects are included,
    /// deleted ones left out, and edited ones judged (and sorted) by their current values.
    public var includesPendingChanges = true
    /// Whether objects of subentities are included.
    public var includesSubentities = true
    /// Relationships (dotted key paths) to load together with the results, in one query per
    /// relationship instead of one per object.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// The identifiers of the stores to search; every store holding the entity when `nil`.
    public var affectedStores: [String]?
    /// The columns of a dictionary fetch (``ObjectContext/fetchDictionaries(_:)``); every
    /// attribute when empty.
    public var propertiesToFetch: [FetchedProperty] = []
    /// Key paths whose values group the rows of a dictionary fetch: one result per group.
    public var propertiesToGroupBy: [String] = []
    /// Which groups a grouped dictionary fetch keeps, by the names of the fetched properties
    /// (`"movies > 1"`).
    public var havingPredicate: QueryPredicate?
    /// Whether a dictionary fetch leaves out duplicate rows.
    public var returnsDistinctResults = false

    /// Creates a request for the objects of an `@Entity` class.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// ```
    public init(predicate: FetchPredicate<Model>? = nil, sortDescriptors: [FetchSortDescriptor<Model>] = []) {
        self.entityName = Model.entity.name
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// Creates a request for the objects of the entity named `entityName`, for models without
    /// classes (`FetchRequest<ManagedObject>(entityName: "Book")`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<ManagedObject>(entityName: "Book", predicate: try FetchPredicate(format: "pages > %d", 300))
    /// let books = try context.fetch(request)
    /// ```
    public init(
        entityName: String, predicate: FetchPredicate<Model>? = nil, sortDescriptors: [FetchSortDescriptor<Model>] = []
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// The request with a fetch limit.
    ///
    /// For example:
    ///
    /// ```swift
    /// let topTen = try context.fetch(FetchRequest<Movie>(sortDescriptors: [.descending(\.rating)]).limit(10))
    /// ```
    public func limit(_ count: Int) -> Self {
        var copy = self
        copy.fetchLimit = count
        return copy
    }

    /// The request with a fetch offset.
    ///
    /// For example:
    ///
    /// ```swift
    /// let secondPage = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]).offset(20).limit(20)
    /// ```
    public func offset(_ count: Int) -> Self {
        var copy = self
        copy.fetchOffset = count
        return copy
    }
}
