import Foundation

/// Deletes objects in the store without loading them (Core Data's `NSBatchDeleteRequest`).
///
/// ```swift
/// let old = BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.year < 1950))
/// try context.execute(old)
/// let some = BatchDeleteRequest(objectIDs: ids)
/// ```
///
/// The delete runs in one transaction and applies the schema's delete rules: cascade deletes the
/// related objects, nullify clears their references (raising their versions), and deny refuses
/// the whole request with ``StrataError/Code/deleteDenied`` when a related object exists.
public struct BatchDeleteRequest: Sendable {
    enum Selection: Sendable {
        case fetchRequest(StoreFetchRequest)
        case objectIDs([ObjectID])
    }

    let selection: Selection
    /// What the result reports.
    public var resultType: BatchResultType = .statusOnly

    /// Deletes the objects a fetch request matches (its predicate, subentity choice, and —
    /// when set — its sort order, limit and offset).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchDeleteRequest(fetchRequest: FetchRequest<Review>(predicate: \.stars == 0))
    /// try context.execute(request)
    /// ```
    public init<Model: EntityModel>(fetchRequest: FetchRequest<Model>) {
        selection = .fetchRequest(
            StoreFetchRequest(
                entityName: fetchRequest.entityName, includesSubentities: fetchRequest.includesSubentities,
                predicate: fetchRequest.predicate?.tree, sortDescriptors: fetchRequest.sortDescriptors.map(\.descriptor),
                fetchLimit: fetchRequest.fetchLimit > 0 ? fetchRequest.fetchLimit : nil,
                fetchOffset: fetchRequest.fetchOffset))
    }

    /// Deletes the objects of `entityName` that `predicate` matches (all of them when `nil`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let everything = BatchDeleteRequest(entityName: "Review")
    /// let unrated = BatchDeleteRequest(entityName: "Review", predicate: try QueryPredicate(format: "stars == 0"))
    /// ```
    public init(entityName: String, predicate: QueryPredicate? = nil) {
        selection = .fetchRequest(StoreFetchRequest(entityName: entityName, predicate: predicate))
    }

    /// Deletes these objects; IDs of objects that no longer exist are skipped.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchDeleteRequest(objectIDs: movies.map(\.objectID))
    /// try context.execute(request)
    /// ```
    public init(objectIDs: [ObjectID]) {
        selection = .objectIDs(objectIDs)
    }
}
