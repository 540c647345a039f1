import Foundation

/// Running batch requests through a context: the context supplies the store, its
/// ``ObjectContext/transactionAuthor`` and ``ObjectContext/name`` for history, and its merge
/// policy for uniqueness conflicts. Batch requests do not change the context's objects; merge
/// their changes with ``mergeChanges(fromRemoteContextSave:into:)`` (contexts that merge
/// automatically, live queries and their controllers follow the store's commit by themselves).
extension ObjectContext {
    /// Runs a batch insert.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = BatchInsertRequest(entity: Movie.self, objects: [["title": "Heat", "year": 1995]])
    /// request.resultType = .count
    /// let result = try context.execute(request)
    /// print(result.count)   // 1
    /// ```
    ///
    /// - Returns: What the request did.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/unknownKey``,
    ///   ``StrataError/Code/typeMismatch``, ``StrataError/Code/valueOutOfRange`` or
    ///   ``StrataError/Code/missingValue`` for a bad row (the message names it and the key),
    ///   ``StrataError/Code/constraintConflict`` under ``MergePolicy/error``; nothing is written
    ///   after any error.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        let entity = try schema.existingEntity(named: request.entityName)
        guard !entity.isAbstract else {
            throw StrataError(
                .abstractEntity, "\(entity.name) is abstract; batch-insert rows of one of its subentities.",
                entityName: entity.name)
        }
        let store = try store(forEntity: entity)
        let insert = StoreBatchInsert(
            entityName: entity.name, conflictResolution: conflictResolution, resultType: request.resultType,
            author: transactionAuthor?.name, contextName: name)
        var reader = BatchRowReader(entity: entity, source: request.source)
        return try store.batchInsert(insert) { row in try reader.next(into: &row) }
    }

    /// Runs a batch update.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchUpdateRequest(entity: Movie.self, where: \.year < 1950, propertiesToUpdate: ["rating": 5.0])
    /// try context.execute(request)
    /// context.refreshAllObjects()   // movies already loaded show the new rating
    /// ```
    ///
    /// - Returns: What the request did.
    /// - Throws: ``StrataError`` for an unknown entity or key, a value of the wrong type, or a
    ///   broken uniqueness constraint; nothing is written after any error.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        let entity = try schema.existingEntity(named: request.entityName)
        let store = try store(forEntity: entity)
        let plan = try FetchPlan(
            StoreFetchRequest(
                entityName: entity.name, includesSubentities: request.includesSubentities, predicate: request.predicate),
            in: schema)
        return try store.batchUpdate(
            StoreBatchUpdate(
                plan: plan, propertiesToUpdate: request.propertiesToUpdate, resultType: request.resultType,
                author: transactionAuthor?.name, contextName: name))
    }

    /// Runs a batch delete.
    ///
    /// Deleting by object IDs that live in several stores runs one transaction per store: like
    /// a save that spans stores, the request is atomic per store only.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = BatchDeleteRequest(fetchRequest: FetchRequest<Review>(predicate: \.stars == 0))
    /// request.resultType = .objectIDs
    /// let result = try context.execute(request)
    /// ObjectContext.mergeChanges(fromRemoteContextSave: result.objectIDNotification(), into: [context])
    /// ```
    ///
    /// - Returns: What the request did.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/deleteDenied`` when a deny rule
    ///   holds; nothing is written after any error.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        switch request.selection {
        case .fetchRequest(let fetchRequest):
            let entity = try schema.existingEntity(named: fetchRequest.entityName)
            return try store(forEntity: entity).batchDelete(
                StoreBatchDelete(
                    selection: .plan(try FetchPlan(fetchRequest, in: schema)), resultType: request.resultType,
                    author: transactionAuthor?.name, contextName: name))
        case .objectIDs(let objectIDs):
            var result = BatchResult(
                kind: .delete, resultType: request.resultType, count: 0, objectIDs: request.resultType == .objectIDs ? [] : nil)
            // One request per store that holds some of the objects.
            var byStore: [ObjectIdentifier: (store: any PersistentStore, ids: [ObjectID])] = [:]
            var order: [ObjectIdentifier] = []
            for objectID in objectIDs where !objectID.isTemporaryID {
                guard let entity = schema.entity(named: objectID.entityName) else { continue }
                let store = try store(forEntity: entity)
                let key = ObjectIdentifier(store)
                if byStore[key] == nil { order.append(key) }
                byStore[key, default: (store, [])].ids.append(objectID)
            }
            for key in order {
                guard let (store, ids) = byStore[key] else { continue }
                let part = try store.batchDelete(
                    StoreBatchDelete(
                        selection: .objectIDs(ids), resultType: request.resultType, author: transactionAuthor?.name,
                        contextName: name))
                result.count += part.count
                result.historyToken = part.historyToken ?? result.historyToken
                if request.resultType == .objectIDs {
                    result.objectIDs = (result.objectIDs ?? []) + (part.objectIDs ?? [])
                    result.insertedObjectIDs = (result.insertedObjectIDs ?? []) + (part.insertedObjectIDs ?? [])
                    result.updatedObjectIDs = (result.updatedObjectIDs ?? []) + (part.updatedObjectIDs ?? [])
                    result.deletedObjectIDs = (result.deletedObjectIDs ?? []) + (part.deletedObjectIDs ?? [])
                }
            }
            return result
        }
    }

    /// Merges changes made outside any context — by a batch request, or by another process —
    /// into contexts (Core Data's `mergeChanges(fromRemoteContextSave:into:)`): objects they
    /// hold that were updated are refreshed, deleted ones leave, and their observers and
    /// controllers hear of it.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.year < 1950))
    /// request.resultType = .objectIDs
    /// let result = try context.execute(request)
    /// ObjectContext.mergeChanges(fromRemoteContextSave: result.objectIDNotification(), into: [context])
    /// ```
    ///
    /// Each context is used where it lives: call this from the isolation domain of every
    /// context passed (the view context's merge belongs on the main actor).
    public static func mergeChanges(fromRemoteContextSave changes: ContextChanges, into contexts: [ObjectContext]) {
        for context in contexts { context.mergeChanges(from: changes) }
    }

    /// How a batch insert resolves uniqueness conflicts under this context's merge policy.
    var conflictResolution: BatchInsertConflictResolution {
        switch mergePolicy {
        case .error: .fail
        case .mergeByPropertyObjectTrump, .overwrite: .replaceStored
        case .mergeByPropertyStoreTrump, .rollback: .keepStored
        }
    }
}

/// Turns a batch insert's source into rows of checked attribute values, one at a time.
struct BatchRowReader {
    let entity: Entity
    let source: BatchInsertRequest.Source
    private var index = 0
    private var dictionaries: IndexingIterator<[[String: Any]]>?
    /// The object a managed-object handler fills, row after row.
    private var reusable: ManagedObject?
    /// Stored attribute numbers.
    private let storedNumbers: [Int]
    /// Attributes whose class gives new objects a value of their own (`var id = UUID()`) where
    /// the entity has no default: a row without them takes a new object's values.
    private let instanceDefaultNumbers: [Int]

    init(entity: Entity, source: BatchInsertRequest.Source) {
        self.entity = entity
        self.source = source
        if case .dictionaries(let rows) = source { dictionaries = rows.makeIterator() }
        storedNumbers = entity.attributes.indices.filter { !entity.attributes[$0].isTransient }
        if case .objectHandler = source {
            instanceDefaultNumbers = []
        } else {
            let sample = Self.newObject(of: entity)._values
            instanceDefaultNumbers = storedNumbers.filter { $0 < sample.count && sample[$0] != entity.defaultValues[$0] }
        }
    }

    /// A new object of the entity, with the class's initial values.
    private static func newObject(of entity: Entity) -> ManagedObject {
        let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
        return type.init(entity: entity)
    }

    /// Fills `row` with the next row's values by attribute number.
    ///
    /// - Returns: `false` when there are no more rows.
    mutating func next(into row: inout [AttributeValue]) throws -> Bool {
        defer { index += 1 }
        switch source {
        case .dictionaries:
            guard let dictionary = dictionaries?.next() else { return false }
            try fill(&row, from: dictionary)
        case .dictionaryHandler(let handler):
            var dictionary: [String: Any] = [:]
            if try handler(&dictionary) { return false }
            try fill(&row, from: dictionary)
        case .objectHandler(let handler):
            // One object serves every row: emptied and given the class's initial values again
            // before each call, it is as new to the handler, without an allocation per row.
            let object: ManagedObject
            if let reusable {
                object = reusable
                // In place: the object's values stay its own, so its setters never copy them.
                let defaults = entity.defaultValues
                for number in defaults.indices { object._values[number] = defaults[number] }
                object._strataApplyInitialValues()
            } else {
                object = Self.newObject(of: entity)
                reusable = object
            }
            if try handler(object) { return false }
            for number in storedNumbers { row[number] = object._values[number] }
            if object._relationships.contains(where: { !$0.isEmptyForBatchInsert }) {
                throw StrataError(
                    .typeMismatch,
                    "Row \(index) of the batch insert of \(entity.name) sets a relationship; batch inserts set attributes only.",
                    entityName: entity.name)
            }
            try checkRequired(row)
        }
        return true
    }

    private func fill(_ row: inout [AttributeValue], from dictionary: [String: Any]) throws {
        for number in storedNumbers { row[number] = entity.defaultValues[number] }
        if instanceDefaultNumbers.contains(where: { dictionary[entity.attributes[$0].name] == nil }) {
            let initial = Self.newObject(of: entity)._values
            for number in instanceDefaultNumbers where number < initial.count { row[number] = initial[number] }
        }
        for (key, value) in dictionary {
            guard let number = entity.attributeNumber(named: key), !entity.attributes[number].isTransient else {
                throw StrataError(
                    .unknownKey,
                    "Row \(index) of the batch insert of \(entity.name) has the key '\(key)', which is not a stored attribute of \(entity.name)."
                        + didYouMean(key, in: entity.attributes.map(\.name)) + " Nothing was inserted.",
                    entityName: entity.name, propertyName: key)
            }
            if let stored = Self.commonValue(value, for: entity.attributes[number]) {
                row[number] = stored
                continue
            }
            if value is NSNull {
                row[number] = .null
                continue
            }
            do {
                row[number] = try ManagedObject.storedValue(
                    from: value, for: entity.attributes[number], of: entity, objectID: nil)
            } catch var error as StrataError {
                error.message = "Row \(index) of the batch insert: " + error.message + " Nothing was inserted."
                throw error
            }
        }
        try checkRequired(row)
    }

    /// The stored form of the values rows usually hold — a value of exactly the attribute's
    /// Swift type — by one cast each; `nil` sends anything else through the full conversion.
    private static func commonValue(_ value: Any, for attribute: AttributeDescription) -> AttributeValue? {
        switch attribute.type {
        case .integer64:
            if let number = value as? Int64 { return .integer(number) }
            if let number = value as? Int { return .integer(Int64(number)) }
        case .integer32:
            if let number = value as? Int32 { return .integer(Int64(number)) }
        case .integer16:
            if let number = value as? Int16 { return .integer(Int64(number)) }
        case .double:
            if let number = value as? Double { return .double(number) }
        case .float:
            if let number = value as? Float { return .float(number) }
        case .string:
            if let text = value as? String { return .string(text) }
        case .boolean:
            if let flag = value as? Bool { return .boolean(flag) }
        case .date:
            if let date = value as? Date { return .date(date) }
        case .uuid:
            if let uuid = value as? UUID { return .uuid(uuid) }
        case .decimal:
            if let number = value as? Decimal { return .decimal(number) }
        default:
            break
        }
        return nil
    }

    private func checkRequired(_ row: [AttributeValue]) throws {
        for number in storedNumbers where row[number].isNull && !entity.attributes[number].isOptional {
            let name = entity.attributes[number].name
            throw StrataError(
                .missingValue,
                "Row \(index) of the batch insert of \(entity.name) has no value for \(name), which is not optional. Nothing was inserted.",
                entityName: entity.name, propertyName: name)
        }
        for number in storedNumbers where row[number].containsNullCharacter {
            let name = entity.attributes[number].name
            throw StrataError(
                .unrepresentableValue,
                "Row \(index) of the batch insert of \(entity.name): \(name) \(AttributeValue.nullCharacterProblem) Nothing was inserted.",
                entityName: entity.name, propertyName: name)
        }
    }
}

extension RelationshipValue {
    /// Whether the relationship holds nothing (what a batch insert requires).
    var isEmptyForBatchInsert: Bool {
        switch self {
        case .toOne(let target): target == nil
        case .toMany(let objects): objects.isEmpty
        case .toManyFault: true
        }
    }
}
