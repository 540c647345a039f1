import Foundation

/// Inserts many objects of one entity straight into the store, without managed objects in a
/// context (Core Data's `NSBatchInsertRequest`).
///
/// Rows come from dictionaries, from value snapshots, or from a handler that fills one row at a
/// time — so that a million rows never sit in memory at once:
///
/// ```swift
/// var next = 0
/// let request = BatchInsertRequest(entityName: "Movie") { (row: inout [String: Any]) in
///     guard next < 1_000_000 else { return true }      // true: no more rows
///     row["title"] = "Movie \(next)"
///     row["year"] = 1990 + next % 30
///     next += 1
///     return false
/// }
/// let result = try context.execute(request)
/// ```
///
/// Every value is checked against its attribute's type as its row is read; one wrong value (or
/// an unknown key, or `nil` for a non-optional attribute) fails the whole request with an error
/// that names the row and the key, and the store is left as it was. Missing keys take the
/// attribute's default value. Batch inserts set attributes only (relationships are left empty)
/// and, like Core Data's, skip validation rules.
///
/// Uniqueness constraints resolve by the executing context's ``ObjectContext/mergePolicy``:
/// ``MergePolicy/error`` fails the request, ``MergePolicy/mergeByPropertyObjectTrump`` and
/// ``MergePolicy/overwrite`` give the stored object the row's values (an upsert), and
/// ``MergePolicy/mergeByPropertyStoreTrump`` and ``MergePolicy/rollback`` keep the stored object.
public struct BatchInsertRequest {
    /// The entity of every row.
    public let entityName: String
    /// What the result reports.
    public var resultType: BatchResultType = .statusOnly

    enum Source {
        case dictionaries([[String: Any]])
        case dictionaryHandler((inout [String: Any]) throws -> Bool)
        case objectHandler((ManagedObject) throws -> Bool)
    }

    let source: Source

    /// Inserts one object per dictionary of attribute values by name.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchInsertRequest(entityName: "Movie", objects: [["title": "Heat", "year": 1995]])
    /// ```
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.source = .dictionaries(objects)
    }

    /// Inserts one object of a class per dictionary of attribute values by name.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchInsertRequest(
    ///     entity: Movie.self, objects: [["title": "Heat", "year": 1995], ["title": "Ronin", "year": 1998]])
    /// try context.execute(request)
    /// ```
    public init<Model: ManagedObject>(entity: Model.Type, objects: [[String: Any]]) {
        self.init(entityName: Model.entity.name, objects: objects)
    }

    /// Inserts the rows a handler fills one at a time (Core Data's `dictionaryHandler`): each
    /// call gets an empty dictionary to fill and returns `true` when there are no more rows
    /// (that call's dictionary is not inserted).
    ///
    /// For example:
    ///
    /// ```swift
    /// var titles = ["Heat", "Ronin", "Collateral"].makeIterator()
    /// let request = BatchInsertRequest(entityName: "Movie") { (row: inout [String: Any]) in
    ///     guard let title = titles.next() else { return true }   // true: no more rows
    ///     row["title"] = title
    ///     return false
    /// }
    /// ```
    public init(entityName: String, dictionaryHandler: @escaping (inout [String: Any]) throws -> Bool) {
        self.entityName = entityName
        self.source = .dictionaryHandler(dictionaryHandler)
    }

    /// Inserts the objects a handler fills one at a time (Core Data's `managedObjectHandler`):
    /// each call gets an object with the entity's default values, not in any context, to set
    /// attributes on, and returns `true` when there are no more (that call's object is not
    /// inserted). The object is only valid during the call: keep its values, not the object.
    ///
    /// For example:
    ///
    /// ```swift
    /// var titles = ["Heat", "Ronin"].makeIterator()
    /// let request = BatchInsertRequest(entity: Movie.self) { movie in
    ///     guard let title = titles.next() else { return true }
    ///     movie.title = title
    ///     return false
    /// }
    /// ```
    public init<Model: ManagedObject>(entity: Model.Type, managedObjectHandler: @escaping (Model) throws -> Bool) {
        self.entityName = Model.entity.name
        self.source = .objectHandler { object in
            guard let model = object as? Model else { return true }
            return try managedObjectHandler(model)
        }
    }

    /// Inserts one object per value snapshot (`Movie.Value`); their object IDs and
    /// relationships are ignored.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchInsertRequest(entity: Movie.self, values: importedMovies)   // [Movie.Value]
    /// ```
    public init<Model: ValueSnapshotRepresentable>(entity: Model.Type, values: [Model.Value]) {
        var iterator = values.makeIterator()
        self.entityName = Model.entity.name
        self.source = .objectHandler { object in
            guard let value = iterator.next(), let model = object as? Model else { return true }
            try model.update(from: value)
            return false
        }
    }
}

extension BatchResult {
    /// The changes as a summary of object IDs, for ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``:
    /// every object the request inserted, updated and deleted when ``resultType`` is
    /// ``BatchResultType/objectIDs``; empty otherwise.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = BatchUpdateRequest(entity: Movie.self, where: \.year < 1950, propertiesToUpdate: ["rating": 5.0])
    /// request.resultType = .objectIDs
    /// let result = try context.execute(request)
    /// ObjectContext.mergeChanges(fromRemoteContextSave: result.objectIDNotification(), into: [context])
    /// ```
    public func objectIDNotification() -> ContextChanges {
        ContextChanges(
            name: .didSave, insertedObjectIDs: Set(insertedObjectIDs ?? []), updatedObjectIDs: Set(updatedObjectIDs ?? []),
            deletedObjectIDs: Set(deletedObjectIDs ?? []))
    }
}
