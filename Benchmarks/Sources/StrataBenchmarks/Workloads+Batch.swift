import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// Batch requests and persistent history (issue 14).
//
// - W13 (the issue's "W12"): batch-insert `count` rows of W1's entity from a handler that fills
//   one object at a time; W13d the same from a dictionary handler. Raw SQLite inserts the same
//   rows with one prepared statement in one transaction.
// - W14 and W15 (the issue's "W13"): a batch update (`price = price + 1`) and a batch delete of
//   the 10% of 200,000 items in the buckets below `deletedBucketLimit`; raw SQLite runs the one
//   UPDATE or DELETE statement.
// - History overhead: W1 and W6 in Strata with persistent history on, against the same with
//   history off, runs interleaved; a table of its own.

/// W13: a batch insert of `count` `Ints` rows; `dictionaries` fills rows as dictionaries
/// instead of objects.
func batchInsertInts(_ contender: Contender, count: Int, dictionaries: Bool, in folder: URL) throws {
    let url = folder.appendingPathComponent("w13.sqlite")
    switch contender {
    case .strata:
        let container = try PersistentContainer(name: "W13", entities: [Ints.self], storeDescriptions: [.sqlite(url)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        var row = 0
        let request: BatchInsertRequest
        if dictionaries {
            request = BatchInsertRequest(entityName: "Ints") { (values: inout [String: Any]) in
                guard row < count else { return true }
                let base = Int64(row &* 10)
                for (offset, name) in FastIntsRecord.columns.enumerated() { values[name] = base &+ Int64(offset) }
                row += 1
                return false
            }
        } else {
            request = BatchInsertRequest(entity: Ints.self) { object in
                guard row < count else { return true }
                fillInts(object, row: row)
                row += 1
                return false
            }
        }
        let result = try context.execute(request)
        try expect(Int64(result.count), Int64(count), "W13's inserted rows")
    case .raw:
        let database = try RawDatabase(path: url.path)
        try database.execute(createIntsTable)
        try database.insertInts(count: count)
    case .grdbCodable, .grdbFast:
        throw BenchmarkError("W13 has no GRDB contender")
    }
}

/// W14: a batch update of the items below `deletedBucketLimit`: `price = price + 1`.
func batchUpdateItems(_ contender: Contender, in folder: URL) throws {
    let url = storeURL(in: folder)
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        let result = try container.newBackgroundContext().execute(
            BatchUpdateRequest(
                entity: Item.self, where: \.bucket < deletedBucketLimit, propertiesToUpdate: ["price": .key("price") + 1]))
        _ = result
    case .raw:
        let database = try RawDatabase(path: url.path)
        try database.execute("BEGIN")
        try database.execute("UPDATE item SET price = price + 1 WHERE bucket < \(deletedBucketLimit)")
        try database.execute("COMMIT")
    case .grdbCodable, .grdbFast:
        throw BenchmarkError("W14 has no GRDB contender")
    }
}

/// Checks W14: the items below the limit cost one more.
func verifyBatchUpdatedItems(itemCount: Int, in folder: URL) throws {
    let changed = Int64(deletedItemCount(itemCount: itemCount))
    let result = try queryIntegers(storeURL(in: folder), "SELECT COUNT(*), SUM(price) FROM item")
    try expect(result, [Int64(itemCount), ItemValues.priceSum(count: itemCount) + changed], "W14's rows and prices")
}

/// W15: a batch delete of the items below `deletedBucketLimit`.
func batchDeleteItems(_ contender: Contender, in folder: URL) throws {
    let url = storeURL(in: folder)
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        try container.newBackgroundContext().execute(
            BatchDeleteRequest(fetchRequest: FetchRequest<Item>(predicate: \.bucket < deletedBucketLimit)))
    case .raw:
        let database = try RawDatabase(path: url.path)
        try database.execute("BEGIN")
        try database.execute("DELETE FROM item WHERE bucket < \(deletedBucketLimit)")
        try database.execute("COMMIT")
    case .grdbCodable, .grdbFast:
        throw BenchmarkError("W15 has no GRDB contender")
    }
}

/// The history-overhead table: W1 and W6 in Strata with history off and on, interleaved run by
/// run so that the machine's noise falls on both alike.
func runHistoryOverheadWorkload(w1Count: Int, itemCount: Int, runs: Int, templates: StoreTemplates) throws -> String {
    let itemsOff = try templates.copy(of: .items(count: itemCount), for: .strata)
    defer { try? FileManager.default.removeItem(at: itemsOff) }
    let itemsOn = try copyFolder(itemsOff)
    defer { try? FileManager.default.removeItem(at: itemsOn) }
    // Opened once with history, the template has its history tables: runs time saves only.
    try openItems(at: storeURL(in: itemsOn), history: true).close()

    var times: [String: [Double]] = [:]
    for run in 0...runs {  // the first round warms up
        for history in [false, true] {
            let w1 = try scratchFolder()
            let insert = try measure { try insertInts(.strata, count: w1Count, in: w1, history: history) }
            try verifyInts(in: w1, file: "w1.sqlite", count: w1Count)
            try? FileManager.default.removeItem(at: w1)
            let w6 = try copyFolder(history ? itemsOn : itemsOff)
            let update = try measure {
                try updateEveryTenthItem(.strata, itemCount: itemCount, in: w6, history: history)
            }
            try verifyUpdatedItems(itemCount: itemCount, in: w6)
            try? FileManager.default.removeItem(at: w6)
            guard run > 0 else { continue }
            times["W1 \(history)", default: []].append(insert.seconds)
            times["W6 \(history)", default: []].append(update.seconds)
        }
    }
    func row(_ name: String, _ description: String) -> String {
        let off = median(times["\(name) false"] ?? [])
        let on = median(times["\(name) true"] ?? [])
        let ratio = off > 0 ? on / off : 0
        return "| \(name): \(description) | \(String(format: "%.3f", off)) | \(String(format: "%.3f", on)) | "
            + "\(String(format: "%.2f×", ratio)) | ≤ 1.3× \(ratio <= 1.3 ? "(met)" : "(missed)") |"
    }
    return """
        Persistent history's cost: Strata with history on against Strata with history off, median of \(runs) \
        interleaved run(s) after a warm-up.

        | workload | history off (s) | history on (s) | on/off | target |
        | --- | --- | --- | --- | --- |
        \(row("W1", "insert \(w1Count) objects, one save"))
        \(row("W6", "change every tenth of \(itemCount) objects, save"))
        """
}
