import Foundation

/// The result of a fetch with a batch size: a collection that knows every matching object's
/// identity up front and loads the objects themselves one batch at a time.
///
/// ```swift
/// var request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
/// request.fetchBatchSize = 1_000
/// for movie in try context.fetchBatched(request) {   // 1,000 rows in memory at a time
///     total += movie.boxOffice
/// }
/// ```
///
/// Only the primary keys of the results are held; reading an element loads its whole batch in
/// one query and keeps that batch alone, so iterating a million rows uses the memory of one
/// batch plus eight bytes per row. Objects you keep a reference to stay alive as usual. Like
/// the context it came from, the collection belongs to one isolation domain.
public struct BatchedFetchResults<Model: ManagedObject>: RandomAccessCollection {
    /// A box for the loaded batch, so that reading an element (a non-mutating subscript) can
    /// replace it.
    final class Loader {
        let context: ObjectContext
        let store: (any PersistentStore)?
        let entity: Entity
        /// The fetch's plan without limit, offset or order: a batch whose keys ascend is read
        /// as one range of primary keys under the same conditions.
        let plan: FetchPlan?
        let keys: [Int64]
        let entityNames: [String]?
        let objects: [ManagedObject]?
        let batchSize: Int
        var batchIndex = -1
        var batch: [ManagedObject] = []

        init(
            context: ObjectContext, store: (any PersistentStore)?, entity: Entity, plan: FetchPlan? = nil,
            keys: [Int64], entityNames: [String]?, objects: [ManagedObject]?, batchSize: Int
        ) {
            self.context = context
            self.store = store
            self.entity = entity
            self.plan = plan.map { plan in
                var scan = plan
                scan.fetchLimit = nil
                scan.fetchOffset = 0
                scan.sorts = []
                return scan
            }
            self.keys = keys
            self.entityNames = entityNames
            self.objects = objects
            self.batchSize = Swift.max(1, batchSize)
        }

        func object(at index: Int) -> ManagedObject {
            if let objects { return objects[index] }
            let wanted = index / batchSize
            if wanted != batchIndex { load(wanted) }
            return batch[index - wanted * batchSize]
        }

        private func load(_ number: Int) {
            let range = (number * batchSize)..<Swift.min((number + 1) * batchSize, keys.count)
            let batchKeys = Array(keys[range])
            // The batch's objects, made in one pass (each entity resolved once), by key.
            var loaded: [Int64: ManagedObject] = [:]
            if let store {
                let rows = (try? store.fetch(batchPlan(for: batchKeys))) ?? []
                // A range may also hold rows saved since the keys were read: keep the batch's own.
                let wanted =
                    rows.count == batchKeys.count
                    ? rows
                    : rows.filter { row in
                        row.objectID.primaryKey.map { Self.contains(batchKeys, $0) } ?? false
                    }
                let objects = (try? context.materialize(wanted)) ?? []
                // The usual case, a range scan in key order: the objects are the batch as is.
                if objects.count == batchKeys.count,
                    zip(objects, batchKeys).allSatisfy({ $0.objectID.primaryKey == $1 })
                {
                    batch = objects
                    batchIndex = number
                    return
                }
                loaded.reserveCapacity(objects.count)
                for object in objects {
                    if let key = object.objectID.primaryKey { loaded[key] = object }
                }
            }
            batch = range.map { position in
                let key = keys[position]
                if let object = loaded[key] { return object }
                let name = entityNames?[position] ?? entity.name
                let id = ObjectID(entityName: name, storeIdentifier: store?.identifier ?? "", primaryKey: key)
                // A row deleted since the keys were read: a fault whose faultingError says so.
                if let object = try? context.object(with: id) { return object }
                let rowEntity = context.schema.entity(named: name) ?? entity
                return (rowEntity.objectType as? ManagedObject.Type ?? ManagedObject.self).init(
                    _storedEntity: rowEntity)
            }
            batchIndex = number
        }

        /// The plan that reads a batch: one range scan when its keys ascend (a fetch in
        /// primary-key order), one lookup per key otherwise.
        private func batchPlan(for batchKeys: [Int64]) -> FetchPlan {
            if var scan = plan, let first = batchKeys.first, let last = batchKeys.last,
                zip(batchKeys, batchKeys.dropFirst()).allSatisfy({ $0 < $1 })
            {
                scan.primaryKeyRange = first...last
                return scan
            }
            return FetchPlan(entity: entity, primaryKeys: batchKeys)
        }

        /// Whether `sorted`, in ascending order, holds `key`.
        private static func contains(_ sorted: [Int64], _ key: Int64) -> Bool {
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < key { low = middle + 1 } else { high = middle }
            }
            return low < sorted.count && sorted[low] == key
        }
    }

    let loader: Loader

    /// The position of the first result.
    public var startIndex: Int { 0 }
    /// The position after the last result.
    public var endIndex: Int { loader.objects?.count ?? loader.keys.count }

    /// The result at `position`, loading its batch if needed.
    public subscript(position: Int) -> Model {
        // Every object of the result is of the request's entity, so the cast holds.
        let object = loader.object(at: position)
        return object.cast(to: Model.self) ?? object as! Model
    }
}

extension ObjectContext {
    /// The objects a request matches, loaded ``FetchRequest/fetchBatchSize`` at a time.
    ///
    /// The store returns the matching primary keys in the request's order; elements are loaded
    /// in batches as they are read (see ``BatchedFetchResults``). When unsaved changes affect
    /// the result, it is computed in full as ``fetch(_:)-(FetchRequest<Model>)`` would.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
    /// request.fetchBatchSize = 500
    /// var total: Decimal = 0
    /// for movie in try context.fetchBatched(request) { total += movie.boxOffice }   // 500 movies loaded at a time
    /// ```
    ///
    /// - Throws: The errors of ``fetch(_:)-(FetchRequest<Model>)``.
    public func fetchBatched<Model: ManagedObject>(_ request: FetchRequest<Model>) throws -> BatchedFetchResults<Model>
    {
        let query = try query(for: request)
        if Model.self != ManagedObject.self, !(query.entity.objectType is Model.Type) {
            throw StrataError(
                .typeMismatch,
                "\(query.entity.name) objects are not \(Model.self) objects; fetch them with FetchRequest<ManagedObject>.",
                entityName: query.entity.name)
        }
        let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 1_000
        if usesPendingChanges(query) || parent != nil || container == nil {
            let objects = try execute(query).filter { $0 is Model }
            return BatchedFetchResults(
                loader: .init(
                    context: self, store: nil, entity: query.entity, keys: [], entityNames: nil, objects: objects,
                    batchSize: batchSize))
        }
        guard let store = try stores(for: query).first else {
            return BatchedFetchResults(
                loader: .init(
                    context: self, store: nil, entity: query.entity, keys: [], entityNames: nil, objects: [],
                    batchSize: batchSize))
        }
        let polymorphic = query.entity.kindNames.count > 1
        let (keys, entityNames) = try store.fetchPrimaryKeys(query.plan, includingEntityNames: polymorphic)
        return BatchedFetchResults(
            loader: .init(
                context: self, store: store, entity: query.entity, plan: query.plan, keys: keys,
                entityNames: entityNames, objects: nil, batchSize: batchSize))
    }
}
