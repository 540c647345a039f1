import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W9: the start-up cost of a larger model. A store of 50 entities, each with five attributes of
// mixed types and a to-one `previous` relationship to the entity before it (inverse to-many
// `next`), is built once (setup); each run opens it and fetches one entity's objects. For
// Strata the run includes building the Schema from descriptions, the work @Entity classes do
// when a container opens; the model has no classes, so the objects are plain ManagedObjects
// read by key. The raw and GRDB tables have the same names and columns as Strata's, and index
// `previous` as Strata does.

enum ManyEntities {
    static let entityCount = 50
    static let rowsPerEntity = 100
    /// The entity whose objects each run fetches.
    static let fetched = 25

    static func name(_ number: Int) -> String { "Entity\(number)" }

    /// The values of object `row` of an entity.
    static func objectName(_ row: Int) -> String { "object \(row)" }
    static func amount(_ row: Int) -> Int64 { Int64(row) }
    static func score(_ row: Int) -> Double { Double(row) / 2 }
    static func created(_ row: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(row) * 3_600) }
    static func flag(_ row: Int) -> Bool { row % 2 == 0 }

    /// The sum of `amount` over one entity's objects, which each run checks.
    static var amountSum: Int64 { Int64(rowsPerEntity * (rowsPerEntity - 1) / 2) }

    static func descriptions() -> [EntityDescription] {
        (0..<entityCount).map { number in
            var relationships: [RelationshipDescription] = []
            if number > 0 {
                relationships.append(
                    RelationshipDescription(name: "previous", destination: name(number - 1), inverse: "next"))
            }
            if number < entityCount - 1 {
                relationships.append(
                    RelationshipDescription(
                        name: "next", destination: name(number + 1), inverse: "previous", isToMany: true))
            }
            return EntityDescription(
                name: name(number),
                attributes: [
                    AttributeDescription(name: "name", type: .string, defaultValue: .string("")),
                    AttributeDescription(name: "amount", type: .integer64, defaultValue: .integer(0)),
                    AttributeDescription(name: "score", type: .double, defaultValue: .double(0)),
                    AttributeDescription(name: "created", type: .date, isOptional: true),
                    AttributeDescription(name: "flag", type: .boolean, defaultValue: .boolean(false)),
                ],
                relationships: relationships)
        }
    }

    static func createTableStatements() -> [String] {
        (0..<entityCount).flatMap { number in
            let reference = number > 0 ? " REFERENCES \(name(number - 1))" : ""
            return [
                "CREATE TABLE \(name(number)) (id INTEGER PRIMARY KEY, name TEXT, amount INTEGER, score REAL, created REAL, flag INTEGER, previous INTEGER\(reference))",
                "CREATE INDEX \(name(number))_previous ON \(name(number))(previous)",
            ]
        }
    }
}

/// The fetched entity's rows as a GRDB Codable record.
struct ManyEntitiesRecord: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = ManyEntities.name(ManyEntities.fetched)
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }
    var id: Int64
    var name: String
    var amount: Int64
    var score: Double
    var created: Date?
    var flag: Bool
    var previous: Int64?
}

/// Builds W9's store (setup: not timed): `rowsPerEntity` objects per entity, each related to the
/// object of the same row in the entity before.
func buildManyEntitiesStore(strata: Bool, at url: URL) throws {
    if strata {
        let schema = try Schema(ManyEntities.descriptions())
        let container = try PersistentContainer(name: "W9", schema: schema, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        var previous: [ManagedObject] = []
        for number in 0..<ManyEntities.entityCount {
            guard let entity = schema.entity(named: ManyEntities.name(number)) else {
                throw BenchmarkError("no entity \(number)")
            }
            previous = try (0..<ManyEntities.rowsPerEntity).map { row in
                let object = ManagedObject(entity: entity)
                context.insert(object)
                try object.setValue(ManyEntities.objectName(row), forKey: "name")
                try object.setValue(ManyEntities.amount(row), forKey: "amount")
                try object.setValue(ManyEntities.score(row), forKey: "score")
                try object.setValue(ManyEntities.created(row), forKey: "created")
                try object.setValue(ManyEntities.flag(row), forKey: "flag")
                if !previous.isEmpty { try object.setValue(previous[row], forKey: "previous") }
                return object
            }
        }
        try context.save()
        context.reset()  // releases the objects, which refer to each other through `previous`/`next`
        try container.close()
    } else {
        let database = try RawDatabase(path: url.path)
        for sql in ManyEntities.createTableStatements() { try database.execute(sql) }
        try database.execute("BEGIN")
        for number in 0..<ManyEntities.entityCount {
            let insert = try database.prepare(
                "INSERT INTO \(ManyEntities.name(number)) (id, name, amount, score, created, flag, previous) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?)")
            defer { sqlite3_finalize(insert) }
            for row in 0..<ManyEntities.rowsPerEntity {
                sqlite3_bind_int64(insert, 1, Int64(row + 1))
                sqlite3_bind_text(insert, 2, ManyEntities.objectName(row), -1, sqliteTransient)
                sqlite3_bind_int64(insert, 3, ManyEntities.amount(row))
                sqlite3_bind_double(insert, 4, ManyEntities.score(row))
                sqlite3_bind_double(insert, 5, ManyEntities.created(row).timeIntervalSinceReferenceDate)
                sqlite3_bind_int(insert, 6, ManyEntities.flag(row) ? 1 : 0)
                if number > 0 { sqlite3_bind_int64(insert, 7, Int64(row + 1)) } else { sqlite3_bind_null(insert, 7) }
                try database.stepDone(insert)
            }
        }
        try database.execute("COMMIT")
    }
}

/// W9: open the store and fetch the objects of one entity, reading their name and amount.
func openAndFetch(_ contender: Contender, in folder: URL) throws {
    let url = storeURL(in: folder)
    var count = 0
    var amountSum: Int64 = 0
    var nameBytes = 0
    switch contender {
    case .strata:
        let schema = try Schema(ManyEntities.descriptions())
        let container = try PersistentContainer(name: "W9", schema: schema, storeDescriptions: [.sqlite(url)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let request = FetchRequest<ManagedObject>(entityName: ManyEntities.name(ManyEntities.fetched))
        for object in try context.fetch(request) {
            count += 1
            if case .integer(let amount) = try object.attributeValue(forKey: "amount") { amountSum += amount }
            if case .string(let name) = try object.attributeValue(forKey: "name") { nameBytes += name.utf8.count }
        }
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare(
            "SELECT id, name, amount, score, created, flag, previous FROM \(ManyEntities.name(ManyEntities.fetched))")
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW {
            // Every column, as the others materialize whole objects.
            let row = (
                id: sqlite3_column_int64(statement, 0), name: String(cString: sqlite3_column_text(statement, 1)),
                amount: sqlite3_column_int64(statement, 2), score: sqlite3_column_double(statement, 3),
                created: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 4)),
                flag: sqlite3_column_int(statement, 5) != 0, previous: sqlite3_column_int64(statement, 6)
            )
            count += 1
            nameBytes += row.name.utf8.count
            amountSum += row.amount
        }
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        for record in try queue.read({ db in try ManyEntitiesRecord.fetchAll(db) }) {
            count += 1
            amountSum += record.amount
            nameBytes += record.name.utf8.count
        }
    case .grdbFast:
        throw BenchmarkError("W9 has no hand-written GRDB variant")
    }
    try expect(count, ManyEntities.rowsPerEntity, "W9's objects")
    try expect(amountSum, ManyEntities.amountSum, "W9's sum of amounts")
    if nameBytes == 0 { throw BenchmarkError("W9 read no names") }
}
