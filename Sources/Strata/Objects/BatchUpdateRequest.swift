import Foundation

/// Sets new values on every object a predicate matches, in the store, without managed objects
/// (Core Data's `NSBatchUpdateRequest`).
///
/// ```swift
/// var request = BatchUpdateRequest(entity: Movie.self, where: \.year < 1950)
/// request.propertiesToUpdate = ["isClassic": true, "rating": .key("rating") + 1]
/// let result = try context.execute(request)
/// ```
///
/// The update is one SQL statement in one transaction; it raises each row's optimistic-lock
/// version, so that contexts holding unsaved edits of those objects see a conflict when they
/// save. Values are checked against their attributes before anything is written. Validation
/// rules are not applied (as in Core Data).
public struct BatchUpdateRequest: Sendable {
    /// The entity whose objects change.
    public var entityName: String
    /// Which objects; all of them when `nil`.
    public var predicate: QueryPredicate?
    /// Whether objects of subentities change too.
    public var includesSubentities: Bool = true
    /// The new values by attribute name: constants, or expressions on the current values.
    public var propertiesToUpdate: [String: BatchUpdateExpression] = [:]
    /// What the result reports.
    public var resultType: BatchResultType = .statusOnly

    /// An update of the objects of `entityName` that `predicate` matches.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchUpdateRequest(
    ///     entityName: "Movie", predicate: try QueryPredicate(format: "year < 1950"),
    ///     propertiesToUpdate: ["rating": .key("rating") + 1])
    /// try context.execute(request)
    /// ```
    public init(entityName: String, predicate: QueryPredicate? = nil, propertiesToUpdate: [String: BatchUpdateExpression] = [:]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }

    /// An update of the objects of a class that `predicate` matches.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchUpdateRequest(entity: Movie.self, where: \.rating == 0, propertiesToUpdate: ["rating": 3.0])
    /// ```
    public init<Model: ManagedObject>(
        entity: Model.Type, where predicate: FetchPredicate<Model>? = nil,
        propertiesToUpdate: [String: BatchUpdateExpression] = [:]
    ) {
        self.init(entityName: Model.entity.name, predicate: predicate?.tree, propertiesToUpdate: propertiesToUpdate)
    }
}
