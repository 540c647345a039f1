import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W6 and W7 change W4's store of items, so every run gets a fresh copy of it (the workloads'
// prepareRun, not timed). Both read the objects first, as an application would: the changes
// are a read-modify-write, not one UPDATE or DELETE statement.

/// W6 raises the price of every tenth item (by serial) by one.
func isUpdated(serial: Int64) -> Bool { serial % 10 == 0 }

/// W7 deletes the buckets below this one: 10% of the items.
let deletedBucketLimit: Int64 = 10

/// W6: fetch every item, raise the price of every tenth, save.
func updateEveryTenthItem(_ contender: Contender, itemCount: Int, in folder: URL, history: Bool = false) throws {
    let url = storeURL(in: folder)
    var fetched = 0
    var changed = 0
    switch contender {
    case .strata:
        let container = try openItems(at: url, history: history)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let items = try context.fetch(FetchRequest<Item>())
        fetched = items.count
        for item in items where isUpdated(serial: item.serial) {
            item.price += 1
            changed += 1
        }
        try context.save()
    case .raw:
        let database = try RawDatabase(path: url.path)
        let select = try database.prepare("SELECT \(itemColumns) FROM item")
        defer { sqlite3_finalize(select) }
        var items: [RawItem] = []
        while sqlite3_step(select) == SQLITE_ROW { items.append(RawItem(select)) }
        fetched = items.count
        try database.execute("BEGIN")
        let update = try database.prepare("UPDATE item SET price = ? WHERE id = ?")
        defer { sqlite3_finalize(update) }
        for item in items where isUpdated(serial: item.serial) {
            sqlite3_bind_int64(update, 1, item.price + 1)
            sqlite3_bind_int64(update, 2, item.id)
            try database.stepDone(update)
            changed += 1
        }
        try database.execute("COMMIT")
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in try ItemRecord.fetchAll(db) }
        fetched = items.count
        try queue.write { db in
            for var item in items where isUpdated(serial: item.serial) {
                item.price += 1
                try item.update(db)
                changed += 1
            }
        }
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in try FastItemRecord.fetchAll(db, sql: "SELECT \(itemColumns) FROM item") }
        fetched = items.count
        try queue.write { db in
            for var item in items where isUpdated(serial: item.serial) {
                item.price += 1
                try item.update(db)
                changed += 1
            }
        }
    }
    try expect(fetched, itemCount, "W6's fetched objects")
    try expect(changed, (itemCount + 9) / 10, "W6's changed objects")
}

/// W6's check: the prices went up by one on every tenth row, and only there.
func verifyUpdatedItems(itemCount: Int, in folder: URL) throws {
    let result = try queryIntegers(
        storeURL(in: folder), "SELECT COUNT(*), SUM(price), SUM(price = serial % 1000 + 1) FROM item")
    let changed = Int64((itemCount + 9) / 10)
    try expect(
        result, [Int64(itemCount), ItemValues.priceSum(count: itemCount) + changed, changed],
        "W6's rows, prices and changed rows")
}

/// W7: fetch the items of the buckets below `deletedBucketLimit` (10%), delete them, save.
func deleteTenPercentOfItems(_ contender: Contender, itemCount: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    var deleted = 0
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for item in try context.fetch(FetchRequest<Item>(predicate: \.bucket < deletedBucketLimit)) {
            context.delete(item)
            deleted += 1
        }
        try context.save()
    case .raw:
        let database = try RawDatabase(path: url.path)
        let select = try database.prepare("SELECT id FROM item WHERE bucket < ?")
        defer { sqlite3_finalize(select) }
        sqlite3_bind_int64(select, 1, deletedBucketLimit)
        var ids: [Int64] = []
        while sqlite3_step(select) == SQLITE_ROW { ids.append(sqlite3_column_int64(select, 0)) }
        try database.execute("BEGIN")
        let delete = try database.prepare("DELETE FROM item WHERE id = ?")
        defer { sqlite3_finalize(delete) }
        for id in ids {
            sqlite3_bind_int64(delete, 1, id)
            try database.stepDone(delete)
            deleted += 1
        }
        try database.execute("COMMIT")
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in try ItemRecord.filter(Column("bucket") < deletedBucketLimit).fetchAll(db) }
        try queue.write { db in
            for item in items {
                if try item.delete(db) { deleted += 1 }
            }
        }
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        let items = try queue.read { db in
            try FastItemRecord.fetchAll(
                db, sql: "SELECT \(itemColumns) FROM item WHERE bucket < ?", arguments: [deletedBucketLimit])
        }
        try queue.write { db in
            for item in items {
                if try item.delete(db) { deleted += 1 }
            }
        }
    }
    try expect(deleted, deletedItemCount(itemCount: itemCount), "W7's deleted objects")
}

/// The number of rows below `itemCount` whose bucket (row % 100) is deleted.
func deletedItemCount(itemCount: Int) -> Int {
    let limit = Int(deletedBucketLimit)
    return itemCount / 100 * limit + min(itemCount % 100, limit)
}

/// W7's check: the deleted buckets are gone, and nothing else.
func verifyDeletedItems(itemCount: Int, in folder: URL) throws {
    let deleted = deletedItemCount(itemCount: itemCount)
    let result = try queryIntegers(
        storeURL(in: folder), "SELECT COUNT(*), SUM(bucket < \(deletedBucketLimit)) FROM item")
    try expect(result, [Int64(itemCount - deleted), 0], "W7's remaining rows and deleted ones left")
}
