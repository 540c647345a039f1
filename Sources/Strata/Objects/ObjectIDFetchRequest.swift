import Foundation

/// A request for the IDs of the objects that match, without their values: the data-stack kit's
/// `NSFetchRequest<NSManagedObjectID>(entityIds:)`, Core Data's `managedObjectIDResultType`.
///
/// ```swift
/// let request = ObjectIDFetchRequest(entityIds: Movie.self).where(\.year < 1950)
/// let ids = try context.fetch(request)        // [ObjectID], Sendable
/// try await container.performBackgroundTask { background in
///     for movie in try background.existing(Movie.self, withIDs: ids) { movie.rating = 5 }
///     try background.save()
/// }
/// ```
///
/// The store returns keys only; no object is loaded or registered in the context. Unsaved
/// changes of the context count, as in any fetch.
public struct ObjectIDFetchRequest<Model: ManagedObject>: Sendable {
    /// The request whose predicate, sort, limit and offset apply.
    public var request: FetchRequest<Model>

    /// A request for the IDs of every object of `type`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = ObjectIDFetchRequest(entityIds: Movie.self)
    /// let ids = try context.fetch(request)   // every movie's ID
    /// ```
    public init(entityIds type: Model.Type) {
        request = FetchRequest<Model>()
    }

    /// A request for the IDs of the objects `request` matches.
    ///
    /// For example:
    ///
    /// ```swift
    /// let classics = FetchRequest<Movie>(predicate: \.year < 1950, sortDescriptors: [.ascending(\.title)])
    /// let request = ObjectIDFetchRequest(classics)
    /// ```
    public init(_ request: FetchRequest<Model>) {
        self.request = request
    }

    /// The request with `predicate` as its predicate, replacing any other.
    ///
    /// For example:
    ///
    /// ```swift
    /// let classics = ObjectIDFetchRequest(entityIds: Movie.self).where(\.year < 1950)
    /// ```
    public func `where`(_ predicate: FetchPredicate<Model>) -> Self {
        Self(request.where(predicate))
    }

    /// The request with `predicate` added with `AND`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = ObjectIDFetchRequest(entityIds: Movie.self).where(\.year < 1950).andWhere(\.rating >= 4)
    /// ```
    public func andWhere(_ predicate: FetchPredicate<Model>) -> Self {
        Self(request.andWhere(predicate))
    }

    /// The request sorted by `descriptors`, replacing any other sort.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = ObjectIDFetchRequest(entityIds: Movie.self).sorted([.descending(\.year), .ascending(\.title)])
    /// ```
    public func sorted(_ descriptors: [FetchSortDescriptor<Model>]) -> Self {
        Self(request.sorted(descriptors))
    }
}

extension ObjectContext {
    /// The IDs of the objects `request` matches, in its order.
    ///
    /// For example:
    ///
    /// ```swift
    /// let ids = try context.fetch(ObjectIDFetchRequest(entityIds: Review.self).where(\.stars == 0))
    /// try context.execute(BatchDeleteRequest(objectIDs: ids))
    /// ```
    ///
    /// - Throws: What a fetch throws.
    public func fetch<Model: ManagedObject>(_ request: ObjectIDFetchRequest<Model>) throws -> [ObjectID] {
        try fetchObjectIDs(request.request)
    }
}
