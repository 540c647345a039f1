import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

/// The entity of W1 and W2: ten Int64 attributes.
@Entity final class Ints: ManagedObject {
    var a: Int64 = 0
    var b: Int64 = 0
    var c: Int64 = 0
    var d: Int64 = 0
    var e: Int64 = 0
    var f: Int64 = 0
    var g: Int64 = 0
    var h: Int64 = 0
    var i: Int64 = 0
    var j: Int64 = 0
}

/// The same row as a GRDB Codable record.
struct IntsRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "ints"
    var a, b, c, d, e, f, g, h, i, j: Int64
}

/// The same row as a hand-written GRDB record (columns by index, no Codable).
struct FastIntsRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "ints"
    var values: [Int64]
    init(values: [Int64]) { self.values = values }
    init(row: Row) throws { values = (0..<10).map { row[$0] } }
    func encode(to container: inout PersistenceContainer) throws {
        for (index, name) in Self.columns.enumerated() { container[name] = values[index] }
    }
    static let columns = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
}

enum Contender: String, CaseIterable {
    case strata, raw, grdbCodable = "grdb-codable", grdbFast = "grdb-fast"
}

/// A fresh folder per measurement.
func scratchFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A copy of a folder (a store with its -wal and -shm files, if any) in a new scratch folder.
func copyFolder(_ source: URL) throws -> URL {
    let destination = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
    try FileManager.default.copyItem(at: source, to: destination)
    return destination
}

/// The store file of W3–W9 in its folder, whoever wrote it.
func storeURL(in folder: URL) -> URL { folder.appendingPathComponent("store.sqlite") }

/// The stores that several workloads start from (W4–W9), built once per process and copied
/// into each workload's folder, so that the untimed setup does not insert a million rows again
/// for every workload. Strata gets a store of its own; raw SQLite and both GRDB contenders share
/// one built with raw SQLite, since they use the same tables.
final class StoreTemplates {
    enum Kind: Hashable {
        /// W4–W7's `Item` objects.
        case items(count: Int)
        /// W8's `Ints` objects.
        case ints(count: Int)
        /// W9's fifty entities.
        case manyEntities
    }

    private let folder: URL
    private var built: [String: URL] = [:]

    init() throws { folder = try scratchFolder() }

    /// A new folder, owned by the caller, holding a copy of the template for `contender`.
    func copy(of kind: Kind, for contender: Contender) throws -> URL {
        try copyFolder(try template(kind, forStrata: contender == .strata))
    }

    private func template(_ kind: Kind, forStrata strata: Bool) throws -> URL {
        let key = "\(kind)-\(strata ? "strata" : "sql")"
        if let url = built[key] { return url }
        let url = folder.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        switch kind {
        case .items(let count): try buildItemsStore(strata: strata, count: count, at: storeURL(in: url))
        case .ints(let count): try buildIntsStore(strata: strata, count: count, at: storeURL(in: url))
        case .manyEntities: try buildManyEntitiesStore(strata: strata, at: storeURL(in: url))
        }
        built[key] = url
        return url
    }

    func removeAll() { try? FileManager.default.removeItem(at: folder) }
}

/// Inserts objects through Strata, saving and resetting the context every `chunk` objects so
/// that building a template of a million objects keeps memory flat. Setup only: the timed
/// workloads save once.
func insertInChunks(
    _ container: PersistentContainer, count: Int, chunk: Int = 50_000, insert: (ObjectContext, Int) throws -> Void
) throws {
    let context = container.newBackgroundContext()
    for row in 0..<count {
        try insert(context, row)
        if (row + 1) % chunk == 0 || row == count - 1 {
            try context.save()
            context.reset()
        }
    }
}

/// Tells SQLite to copy a bound text or blob (the C macro SQLITE_TRANSIENT, which Swift does
/// not import).
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The integers of the first row a query returns, read through a read-only connection: the
/// untimed checks that a workload did its work. Table names are case-insensitive in SQLite,
/// so one query reads Strata's table `Item` and the others' `item` alike.
func queryIntegers(_ store: URL, _ sql: String) throws -> [Int64] {
    var handle: OpaquePointer?
    defer { sqlite3_close(handle) }
    guard sqlite3_open_v2(store.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
        throw BenchmarkError("cannot open \(store.path)")
    }
    var statement: OpaquePointer?
    defer { sqlite3_finalize(statement) }
    guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
        throw BenchmarkError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
    }
    guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchmarkError("\(sql) returned no row") }
    return (0..<sqlite3_column_count(statement)).map { sqlite3_column_int64(statement, $0) }
}


let createIntsTable = "CREATE TABLE ints (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER, g INTEGER, h INTEGER, i INTEGER, j INTEGER)"

/// Raw SQLite through its C API: prepared statements, one transaction, columns by index.
final class RawDatabase {
    var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw BenchmarkError("cannot open \(path)") }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
    }

    deinit { sqlite3_close(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(handle)))
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(handle)))
        }
        return statement
    }

    func insertInts(count: Int) throws {
        try execute("BEGIN")
        let statement = try prepare("INSERT INTO ints (a, b, c, d, e, f, g, h, i, j) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        for row in 0..<count {
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 1), Int64(row &* 10 &+ column)) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("insert failed") }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    /// Steps a statement that returns no rows, then resets it for the next bindings.
    func stepDone(_ statement: OpaquePointer?) throws {
        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
        sqlite3_reset(statement)
    }

    func readInts() throws -> Int64 {
        let statement = try prepare("SELECT a, b, c, d, e, f, g, h, i, j FROM ints")
        defer { sqlite3_finalize(statement) }
        var rows: [[Int64]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var values = [Int64](repeating: 0, count: 10)
            for column in 0..<10 { values[column] = sqlite3_column_int64(statement, Int32(column)) }
            rows.append(values)
        }
        return rows.reduce(0) { $0 &+ $1.reduce(0, &+) }
    }
}


/// Inserts the `Ints` object of row `row`: attributes `row * 10` to `row * 10 + 9`.
func makeInts(row: Int, in context: ObjectContext) {
    fillInts(Ints(context: context), row: row)
}

/// Sets the attributes of row `row` on `object`: `row * 10` to `row * 10 + 9`.
func fillInts(_ object: Ints, row: Int) {
    let base = Int64(row &* 10)
    object.a = base
    object.b = base &+ 1
    object.c = base &+ 2
    object.d = base &+ 3
    object.e = base &+ 4
    object.f = base &+ 5
    object.g = base &+ 6
    object.h = base &+ 7
    object.i = base &+ 8
    object.j = base &+ 9
}

/// W1: insert `count` objects with ten Int64 attributes in one save.
func insertInts(_ contender: Contender, count: Int, in folder: URL, history: Bool = false) throws {
    switch contender {
    case .strata:
        let container = try PersistentContainer(
            name: "W1", entities: [Ints.self],
            storeDescriptions: [.sqlite(folder.appendingPathComponent("w1.sqlite"), persistentHistoryTracking: history)])
        let context = container.newBackgroundContext()
        for row in 0..<count { makeInts(row: row, in: context) }
        try context.save()
        try container.close()
    case .raw:
        let database = try RawDatabase(path: folder.appendingPathComponent("w1.sqlite").path)
        try database.execute(createIntsTable)
        try database.insertInts(count: count)
    case .grdbCodable, .grdbFast:
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("w1.sqlite").path)
        try queue.write { db in try db.execute(sql: createIntsTable) }
        try queue.write { db in
            for row in 0..<count {
                let values = (0..<10).map { Int64(row &* 10 &+ $0) }
                if contender == .grdbCodable {
                    try IntsRecord(
                        a: values[0], b: values[1], c: values[2], d: values[3], e: values[4], f: values[5], g: values[6],
                        h: values[7], i: values[8], j: values[9]
                    ).insert(db)
                } else {
                    try FastIntsRecord(values: values).insert(db)
                }
            }
        }
    }
}

/// Prepares the store of W2 and W12, `count` rows, for a contender (not timed), in a new scratch
/// folder.
func prepareInts(_ contender: Contender, count: Int) throws -> URL {
    let folder = try scratchFolder()
    try insertInts(contender, count: count, in: folder)
    return folder
}

/// Every `Ints` object of W1's store at `path`, fetched in one request, folded into a total.
func foldStrataInts(at path: URL, _ add: (Int64, Ints) -> Int64) throws -> Int64 {
    let container = try PersistentContainer(name: "W1", entities: [Ints.self], storeDescriptions: [.sqlite(path)])
    defer { try? container.close() }
    let context = container.newBackgroundContext()
    return try context.fetch(FetchRequest<Ints>()).reduce(0, add)
}

/// W2: fetch every row, fully materialized, reading every attribute.
func fetchInts(_ contender: Contender, in folder: URL) throws -> Int64 {
    let path = folder.appendingPathComponent("w1.sqlite")
    switch contender {
    case .strata:
        return try foldStrataInts(at: path) { total, object in
            let first = total &+ object.a &+ object.b &+ object.c &+ object.d &+ object.e
            return first &+ object.f &+ object.g &+ object.h &+ object.i &+ object.j
        }
    case .raw:
        return try RawDatabase(path: path.path).readInts()
    case .grdbCodable:
        let queue = try DatabaseQueue(path: path.path)
        let records = try queue.read { db in try IntsRecord.fetchAll(db) }
        return records.reduce(0) { $0 &+ $1.a &+ $1.b &+ $1.c &+ $1.d &+ $1.e &+ $1.f &+ $1.g &+ $1.h &+ $1.i &+ $1.j }
    case .grdbFast:
        let queue = try DatabaseQueue(path: path.path)
        let records = try queue.read { db in try FastIntsRecord.fetchAll(db, sql: "SELECT a, b, c, d, e, f, g, h, i, j FROM ints") }
        return records.reduce(0) { $0 &+ $1.values.reduce(0, &+) }
    }
}

/// W12 (issue 13's "W11"): fetch every row as an object, but read only attribute `a`. Raw SQLite
/// and hand-written GRDB select that one column, as their users would; GRDB's Codable records
/// decode every column, as Strata's objects do.
func fetchIntsReadingOne(_ contender: Contender, in folder: URL) throws -> Int64 {
    let path = folder.appendingPathComponent("w1.sqlite")
    switch contender {
    case .strata:
        return try foldStrataInts(at: path) { total, object in total &+ object.a }
    case .raw:
        let database = try RawDatabase(path: path.path)
        let statement = try database.prepare("SELECT a FROM ints")
        defer { sqlite3_finalize(statement) }
        var values: [Int64] = []
        while sqlite3_step(statement) == SQLITE_ROW { values.append(sqlite3_column_int64(statement, 0)) }
        return values.reduce(0, &+)
    case .grdbCodable:
        let queue = try DatabaseQueue(path: path.path)
        let records = try queue.read { db in try IntsRecord.fetchAll(db) }
        return records.reduce(0) { $0 &+ $1.a }
    case .grdbFast:
        let queue = try DatabaseQueue(path: path.path)
        let values = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT a FROM ints") }
        return values.reduce(0, &+)
    }
}

/// The sum of attribute `a` of `count` rows as W1 writes them: 0, 10, 20, ….
func expectedIntsFirstAttributeTotal(count: Int) -> Int64 {
    10 * Int64(count) * Int64(count - 1) / 2
}


/// W1's check: the store holds `count` rows with the values W1 writes.
func verifyInts(in folder: URL, file: String, count: Int) throws {
    let result = try queryIntegers(
        folder.appendingPathComponent(file), "SELECT COUNT(*), SUM(a + b + c + d + e + f + g + h + i + j) FROM ints")
    try expect(result, [Int64(count), expectedIntsTotal(count: count)], "rows and their total")
}
