import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// The store of W4–W7: objects with an indexed `bucket` (row % 100, so that one bucket holds 1%
// of the rows) and three more Int64 attributes. Built once per process (StoreTemplates).
// W4: fetch one bucket through the index. W5: sum and average `price` in SQL.

@Entity final class Item: ManagedObject {
    @Attribute(.indexed) var bucket: Int64 = 0
    var price: Int64 = 0
    var quantity: Int64 = 0
    var serial: Int64 = 0
}


let createItemsTable = [
    "CREATE TABLE item (id INTEGER PRIMARY KEY, bucket INTEGER, price INTEGER, quantity INTEGER, serial INTEGER)",
    "CREATE INDEX item_bucket ON item(bucket)",
]
let itemColumns = "id, bucket, price, quantity, serial"

/// An item as the raw contender reads it.
struct RawItem {
    var id, bucket, price, quantity, serial: Int64

    /// Reads the columns of `itemColumns`, by index.
    init(_ statement: OpaquePointer?) {
        id = sqlite3_column_int64(statement, 0)
        bucket = sqlite3_column_int64(statement, 1)
        price = sqlite3_column_int64(statement, 2)
        quantity = sqlite3_column_int64(statement, 3)
        serial = sqlite3_column_int64(statement, 4)
    }
}

struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64?
    var bucket, price, quantity, serial: Int64
}

/// Columns by index: fetch it with `SELECT \(itemColumns)`.
struct FastItemRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64
    var bucket, price, quantity, serial: Int64
    init(row: Row) throws {
        id = row[0]
        bucket = row[1]
        price = row[2]
        quantity = row[3]
        serial = row[4]
    }
    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["bucket"] = bucket
        container["price"] = price
        container["quantity"] = quantity
        container["serial"] = serial
    }
}

/// Builds the store of W4–W7 (setup: not timed).
func buildItemsStore(strata: Bool, count: Int, at url: URL) throws {
    if strata {
        let container = try PersistentContainer(name: "Items", entities: [Item.self], storeDescriptions: [.sqlite(url)])
        try insertInChunks(container, count: count) { context, row in
            let item = Item(context: context)
            item.bucket = ItemValues.bucket(row)
            item.price = ItemValues.price(row)
            item.quantity = ItemValues.quantity(row)
            item.serial = ItemValues.serial(row)
        }
        try container.close()
    } else {
        let database = try RawDatabase(path: url.path)
        for sql in createItemsTable { try database.execute(sql) }
        try database.execute("BEGIN")
        let insert = try database.prepare("INSERT INTO item (bucket, price, quantity, serial) VALUES (?, ?, ?, ?)")
        defer { sqlite3_finalize(insert) }
        for row in 0..<count {
            sqlite3_bind_int64(insert, 1, ItemValues.bucket(row))
            sqlite3_bind_int64(insert, 2, ItemValues.price(row))
            sqlite3_bind_int64(insert, 3, ItemValues.quantity(row))
            sqlite3_bind_int64(insert, 4, ItemValues.serial(row))
            try database.stepDone(insert)
        }
        try database.execute("COMMIT")
    }
}

func openItems(at url: URL, history: Bool = false) throws -> PersistentContainer {
    try PersistentContainer(
        name: "Items", entities: [Item.self], storeDescriptions: [.sqlite(url, persistentHistoryTracking: history)])
}

/// W4: the objects of one bucket, fully materialized, every attribute read.
func fetchBucket(_ contender: Contender, itemCount: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    var count = 0
    var priceSum: Int64 = 0
    var checksum: Int64 = 0  // the other attributes, so that every one is read
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for item in try context.fetch(FetchRequest<Item>(predicate: \.bucket == fetchedBucket)) {
            count += 1
            priceSum += item.price
            checksum &+= item.bucket &+ item.quantity &+ item.serial
        }
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare("SELECT \(itemColumns) FROM item WHERE bucket = ?")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, fetchedBucket)
        var items: [RawItem] = []
        while sqlite3_step(statement) == SQLITE_ROW { items.append(RawItem(statement)) }
        for item in items {
            count += 1
            priceSum += item.price
            checksum &+= item.bucket &+ item.quantity &+ item.serial
        }
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in try ItemRecord.filter(Column("bucket") == fetchedBucket).fetchAll(db) }
        for item in items {
            count += 1
            priceSum += item.price
            checksum &+= item.bucket &+ item.quantity &+ item.serial
        }
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in
            try FastItemRecord.fetchAll(
                db, sql: "SELECT \(itemColumns) FROM item WHERE bucket = ?", arguments: [fetchedBucket])
        }
        for item in items {
            count += 1
            priceSum += item.price
            checksum &+= item.bucket &+ item.quantity &+ item.serial
        }
    }
    try expect(count, itemCount / 100, "W4's objects")
    try expect(priceSum, ItemValues.priceSum(count: itemCount, bucket: fetchedBucket), "W4's sum of prices")
    if checksum == 0 { throw BenchmarkError("W4 read no attributes") }
}

/// W5: SUM and AVG of `price`, computed by SQLite.
func aggregatePrices(_ contender: Contender, itemCount: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    let sum: Int64
    let average: Double?
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        // Both aggregates in one query, as the other contenders compute them (Core Data: one
        // dictionary fetch with two expression descriptions). `context.sum` and
        // `context.average` would scan the table twice.
        var request = FetchRequest<Item>()
        request.propertiesToFetch = [.sum("price", as: "sum"), .average("price", as: "average")]
        let row = try context.fetchDictionaries(request).first
        guard case .integer(let total)? = row?["sum"] else { throw BenchmarkError("W5 returned no sum") }
        sum = total
        if case .double(let mean)? = row?["average"] { average = mean } else { average = nil }
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare("SELECT SUM(price), AVG(price) FROM item")
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchmarkError("W5 returned no row") }
        sum = sqlite3_column_int64(statement, 0)
        average = sqlite3_column_double(statement, 1)
    case .grdbCodable, .grdbFast:
        // GRDB's query interface, the typed counterpart of Strata's key paths.
        let queue = try DatabaseQueue(path: url.path)
        let row = try queue.read { db in
            try ItemRecord.select(GRDB.sum(Column("price")), GRDB.average(Column("price"))).asRequest(of: Row.self)
                .fetchOne(db)
        }
        guard let row else { throw BenchmarkError("W5 returned no row") }
        sum = row[0]
        average = row[1]
    }
    let expectedSum = ItemValues.priceSum(count: itemCount)
    try expect(sum, expectedSum, "W5's sum")
    guard let average, abs(average - Double(expectedSum) / Double(itemCount)) < 1e-6 else {
        throw BenchmarkError("W5's average: got \(String(describing: average))")
    }
}
