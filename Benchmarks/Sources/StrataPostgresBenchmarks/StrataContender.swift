import BenchmarkSupport
import Foundation
import Strata
import StrataPostgres

/// Strata as an application uses it: `@Entity` classes, a `PersistentContainer` on a PostgreSQL
/// store in a schema of its own, a new background context per run, `fetch` and `save`. The
/// same code as the SQLite workloads; only the store description differs.
///
/// Each container stays open across runs, as an app server keeps its container: a run times
/// the work, not connecting and logging in (which Strata's pool does once per connection).
final class StrataContender: Contender {
    let name = ContenderName.strata
    private let server: BenchmarkServer
    private var insertContainer: PersistentContainer?
    private var intsContainer: PersistentContainer?
    private var itemsContainer: PersistentContainer?

    init(server: BenchmarkServer) {
        self.server = server
    }

    private func open(_ schema: String, _ entities: [ManagedObject.Type]) throws -> PersistentContainer {
        try PersistentContainer(
            name: schema, entities: entities, storeDescriptions: [.postgres(server.strataConfiguration(schema: schema))])
    }

    /// Inserts through Strata, saving and resetting the context every `chunk` objects (setup
    /// only: the timed W1 saves once).
    private func insertInChunks(
        _ container: PersistentContainer, count: Int, chunk: Int = 50_000, insert: (ObjectContext, Int) -> Void
    ) throws {
        let context = container.newBackgroundContext()
        for row in 0..<count {
            insert(context, row)
            if (row + 1) % chunk == 0 || row == count - 1 {
                try context.save()
                context.reset()
            }
        }
    }

    func prepareInts(count: Int) throws {
        guard intsContainer == nil else { return }
        let container = try open(Schemas.strataInts, [Ints.self])
        try insertInChunks(container, count: count) { context, row in fillInts(Ints(context: context), row: row) }
        try server.execute("VACUUM ANALYZE \(Schemas.strataInts).\"Ints\"")
        intsContainer = container
    }

    func prepareItems(count: Int) throws {
        guard itemsContainer == nil else { return }
        let container = try open(Schemas.strataItems, [Item.self])
        try insertInChunks(container, count: count) { context, row in
            let item = Item(context: context)
            item.bucket = ItemValues.bucket(row)
            item.price = ItemValues.price(row)
            item.quantity = ItemValues.quantity(row)
            item.serial = ItemValues.serial(row)
        }
        try server.execute("VACUUM ANALYZE \(Schemas.strataItems).\"Item\"")
        itemsContainer = container
    }

    func prepareInsert() throws {
        if insertContainer == nil { insertContainer = try open(Schemas.strataInsert, [Ints.self]) }
        try server.execute("TRUNCATE \(Schemas.strataInsert).\"Ints\"")
    }

    func verifyInsert(count: Int) throws {
        let result = try server.integers(SQLTables.intsCheck("\(Schemas.strataInsert).\"Ints\""))
        try expect(result, [Int64(count), expectedIntsTotal(count: count)], "W1's rows and their total")
    }

    func insertInts(count: Int) throws {
        let context = try required(insertContainer).newBackgroundContext()
        for row in 0..<count { fillInts(Ints(context: context), row: row) }
        try context.save()
    }

    func fetchInts() throws -> Int64 {
        let context = try required(intsContainer).newBackgroundContext()
        return try context.fetch(FetchRequest<Ints>()).reduce(0) { total, object in
            let first = total &+ object.a &+ object.b &+ object.c &+ object.d &+ object.e
            return first &+ object.f &+ object.g &+ object.h &+ object.i &+ object.j
        }
    }

    func fetchBucket() throws -> BucketResult {
        let context = try required(itemsContainer).newBackgroundContext()
        var result = BucketResult()
        for item in try context.fetch(FetchRequest<Item>(predicate: \.bucket == fetchedBucket)) {
            result.add(bucket: item.bucket, price: item.price, quantity: item.quantity, serial: item.serial)
        }
        return result
    }

    func aggregatePrices() throws -> (sum: Int64, average: Double?) {
        let context = try required(itemsContainer).newBackgroundContext()
        // Both aggregates in one query, as the SQLite workload asks for them (Core Data: one
        // dictionary fetch with two expression descriptions).
        var request = FetchRequest<Item>()
        request.propertiesToFetch = [.sum("price", as: "sum"), .average("price", as: "average")]
        let row = try context.fetchDictionaries(request).first
        guard case .integer(let sum)? = row?["sum"] else {
            throw BenchmarkError("W5 returned no integer sum: \(String(describing: row?["sum"]))")
        }
        guard case .double(let average)? = row?["average"] else { return (sum, nil) }
        return (sum, average)
    }

    func close() {
        for container in [insertContainer, intsContainer, itemsContainer] { try? container?.close() }
    }
}

/// The container a workload's setup opened; a missing one is a bug in the workload list.
func required(_ container: PersistentContainer?) throws -> PersistentContainer {
    guard let container else { throw BenchmarkError("the workload's setup opened no container") }
    return container
}
