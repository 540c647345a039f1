import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W8: iterate over a large store of W1's `Ints` objects without holding them all: Strata's
// batched fetch (1,000 objects loaded at a time), a stepped statement in raw SQLite, a GRDB
// cursor. Each contender materializes every row (all ten columns) and reads `a`; the table's
// peak RSS column shows whether memory stays flat.

let iterationBatchSize = 1_000

/// Builds W8's store (setup: not timed), with the values W1 writes.
func buildIntsStore(strata: Bool, count: Int, at url: URL) throws {
    if strata {
        let container = try PersistentContainer(name: "W8", entities: [Ints.self], storeDescriptions: [.sqlite(url)])
        try insertInChunks(container, count: count) { context, row in makeInts(row: row, in: context) }
        try container.close()
    } else {
        let database = try RawDatabase(path: url.path)
        try database.execute(createIntsTable)
        try database.insertInts(count: count)
    }
}

/// A row of `ints` as the raw contender reads it: on the stack, no allocation.
struct RawIntsRow {
    var a, b, c, d, e, f, g, h, i, j: Int64

    init(_ statement: OpaquePointer?) {
        a = sqlite3_column_int64(statement, 0)
        b = sqlite3_column_int64(statement, 1)
        c = sqlite3_column_int64(statement, 2)
        d = sqlite3_column_int64(statement, 3)
        e = sqlite3_column_int64(statement, 4)
        f = sqlite3_column_int64(statement, 5)
        g = sqlite3_column_int64(statement, 6)
        h = sqlite3_column_int64(statement, 7)
        i = sqlite3_column_int64(statement, 8)
        j = sqlite3_column_int64(statement, 9)
    }
}

/// W8: every object, one at a time, reading `a`.
func iterateInts(_ contender: Contender, count expected: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    var count = 0
    var total: Int64 = 0
    switch contender {
    case .strata:
        let container = try PersistentContainer(name: "W8", entities: [Ints.self], storeDescriptions: [.sqlite(url)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        var request = FetchRequest<Ints>()
        request.fetchBatchSize = iterationBatchSize
        for object in try context.fetchBatched(request) {
            count += 1
            total &+= object.a
        }
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare("SELECT a, b, c, d, e, f, g, h, i, j FROM ints")
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW {
            let row = RawIntsRow(statement)
            count += 1
            total &+= row.a
        }
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        try queue.read { db in
            let cursor = try IntsRecord.fetchCursor(db)
            while let record = try cursor.next() {
                count += 1
                total &+= record.a
            }
        }
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        try queue.read { db in
            let cursor = try FastIntsRecord.fetchCursor(db, sql: "SELECT a, b, c, d, e, f, g, h, i, j FROM ints")
            while let record = try cursor.next() {
                count += 1
                total &+= record.values[0]
            }
        }
    }
    try expect(count, expected, "W8's objects")
    // a = 10 · row, so the total is 10 · (0 + 1 + … + count - 1).
    try expect(total, Int64(expected) * Int64(expected - 1) / 2 * 10, "W8's sum of a")
}
