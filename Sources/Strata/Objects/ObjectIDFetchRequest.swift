import Foundation

/// A request for the IDs of the objects that match, without their values: the data-stack kit's
/// `NSFetchRequest<NSManagedObjectID>(entityIds:)`, Core Data's `managedObjectIDResultType`.
///
/// ```swift
/// let request = ObjectIDFetchRequest(entityIds: Person.self).where(\.age >= 18)
/// let ids = try context.fetch(request)        // [ObjectID], Sendable
/// try await container.performBackgroundTask { background in
///     for id in ids { ... }
/// }
/// ```
///
/// The store returns keys only; no object is loaded or registered in the context. Unsaved
/// changes of the context count, as in any fetch.
public struct ObjectIDFetchRequest<Model: ManagedObject>: Sendable {
    /// The request whose predicate, sort, limit and offset apply.
    public var request: FetchRequest<Model>

    /// A request for the IDs of every object of `type`.
    public init(entityIds type: Model.Type) {
        request = FetchRequest<Model>()
    }

    /// A request for the IDs of the objects `request` matches.
    public init(_ request: FetchRequest<Model>) {
        self.request = request
    }

    /// The request with `predicate` as its predicate, replacing any other.
    public func `where`(_ predicate: FetchPredicate<Model>) -> Self {
        Self(request.where(predicate))
    }

    /// The request with `predicate` added with `AND`.
    public func andWhere(_ predicate: FetchPredicate<Model>) -> Self {
        Self(request.andWhere(predicate))
    }

    /// The request sorted by `descriptors`, replacing any other sort.
    public func sorted(_ descriptors: [FetchSortDescriptor<Model>]) -> Self {
        Self(request.sorted(descriptors))
    }
}

extension ObjectContext {
    /// The IDs of the objects `request` matches, in its order.
    ///
    /// - Throws: What a fetch throws.
    public func fetch<Model: ManagedObject>(_ request: ObjectIDFetchRequest<Model>) throws -> [ObjectID] {
        try fetchObjectIDs(request.request)
    }
}
