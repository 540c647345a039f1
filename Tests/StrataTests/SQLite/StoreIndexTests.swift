import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// The indexes a schema implies: names that cannot collide, and a check on open that each one
/// exists with its exact definition.
@Suite struct StoreIndexTests {
    /// `Tag` has a uniqueness constraint on `name` and an index called `unique_0`, which in
    /// format 1 took the constraint's index name and switched the constraint off.
    static func tagSchema() throws -> Schema {
        try Schema([
            EntityDescription(
                name: "Tag", attributes: [.init(name: "name", type: .string), .init(name: "rank", type: .integer64, isOptional: true)],
                uniquenessConstraints: [["name"]], indexes: [IndexDescription(name: "unique_0", ["rank"])])
        ])
    }

    static func indexes(in url: URL) throws -> [String: String] {
        let queue = try DatabaseQueue(path: url.path, configuration: {
            var configuration = Configuration()
            configuration.readonly = true
            return configuration
        }())
        defer { try? queue.close() }
        return try queue.read { db in
            var indexes: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
                if let name: String = row[0], let sql: String = row[1] { indexes[name] = sql }
            }
            return indexes
        }
    }

    static func saveTag(_ name: String, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        let entity = try #require(container.schema.entity(named: "Tag"))
        let tag = ManagedObject(entity: entity)
        context.insert(tag)
        try tag.setValue(name, forKey: "name")
        try context.save()
    }

    @Test func anIndexNamedLikeAConstraintLeavesTheConstraintOn() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Tags.sqlite")
        let schema = try Self.tagSchema()
        let container = try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url)])
        try Self.saveTag("swift", in: container)
        do {
            try Self.saveTag("swift", in: container)
            Issue.record("a duplicate was saved")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
        }
        #expect(try container.newBackgroundContext().count(entityName: "Tag") == 1)
        let indexes = try Self.indexes(in: url)
        #expect(indexes["Tag.unique.0"]?.hasPrefix("CREATE UNIQUE INDEX") == true)
        #expect(indexes["Tag.unique_0"]?.hasPrefix("CREATE INDEX") == true)
    }

    @Test func namesThatUsedToJoinAlikeStayApart() throws {
        // Format 1 named both indexes "A_b_c".
        let schema = try Schema([
            EntityDescription(name: "A", attributes: [.init(name: "x", type: .string)], indexes: [IndexDescription(name: "b_c", ["x"])]),
            EntityDescription(name: "A_b", attributes: [.init(name: "y", type: .string)], indexes: [IndexDescription(name: "c", ["y"])]),
        ])
        let directory = try TemporaryDirectory()
        let url = directory.file("Names.sqlite")
        let container = try PersistentContainer(name: "Names", schema: schema, storeDescriptions: [.sqlite(url)])
        try container.close()
        let indexes = try Self.indexes(in: url)
        for index in StoreLayout(schema: schema).indexes { #expect(indexes[index.name] == index.sql) }
        #expect(indexes.keys.contains("A.b_c") && indexes.keys.contains("A_b.c"))
    }

    /// Random schemas built from name fragments that joined the old way collide (`A`, `A_b`,
    /// `unique`, `0`, `fk`, `source`...): every index the layout implies has a name of its own,
    /// and a new store has each of them with its exact definition.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func generatedIndexNamesNeverCollide(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let fragments = ["A", "b", "c", "unique", "fk", "source", "target", "by", "x"]
        func name() -> String {
            let count = Int.random(in: 1...3, using: &random)
            let parts = (0..<count).map { _ in fragments.randomElement(using: &random) ?? "A" }
            return parts.joined(separator: "_")
        }
        var entityNames: [String] = []
        while entityNames.count < 4 {
            let candidate = "E" + name()
            if !entityNames.contains(where: { $0.lowercased() == candidate.lowercased() }) { entityNames.append(candidate) }
        }
        var entities: [EntityDescription] = []
        for (number, entityName) in entityNames.enumerated() {
            let attributes = ["p", "q", "r"].map { AttributeDescription(name: $0, type: .string, isOptional: true) }
            var indexNames: Set<String> = []
            var indexes: [IndexDescription] = []
            for _ in 0..<3 {
                let indexName = name() + (random.chance(0.5) ? "_\(Int.random(in: 0...2, using: &random))" : "")
                if indexNames.insert(indexName.lowercased()).inserted {
                    indexes.append(IndexDescription(name: indexName, [["p", "q", "r"].randomElement(using: &random) ?? "p"]))
                }
            }
            let next = entityNames[(number + 1) % entityNames.count]
            entities.append(
                EntityDescription(
                    name: entityName, attributes: attributes,
                    relationships: [
                        RelationshipDescription(name: "one", destination: next, inverse: nil),
                        RelationshipDescription(name: "many", destination: next, inverse: nil, isToMany: true),
                    ],
                    uniquenessConstraints: [["p"], ["q", "r"]], indexes: indexes))
        }
        let schema = try Schema(entities)
        let layout = StoreLayout(schema: schema)
        let names = layout.indexes.map(\.name)
        #expect(Set(names.map { $0.lowercased() }).count == names.count, "\(names.sorted())")

        let directory = try TemporaryDirectory()
        let url = directory.file("Generated.sqlite")
        try PersistentContainer(name: "Generated", schema: schema, storeDescriptions: [.sqlite(url)]).close()
        #expect(try Self.indexes(in: url) == Dictionary(uniqueKeysWithValues: layout.indexes.map { ($0.name, $0.sql) }))
    }

    @Test func indexNamesMustBeIdentifiers() throws {
        do {
            _ = try Schema([
                EntityDescription(
                    name: "Tag", attributes: [.init(name: "name", type: .string)], uniquenessConstraints: [["name"]],
                    indexes: [IndexDescription(name: "unique.0", ["name"])])
            ])
            Issue.record("an index name with a dot was accepted")
        } catch let error as StrataError {
            #expect(error.code == .invalidSchema)
            #expect(error.details.contains { $0.message.contains("unique.0") })
        }
    }

    @Test func aMissingOrChangedIndexIsRepairedOnOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Tags.sqlite")
        let schema = try Self.tagSchema()
        try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url)]).close()
        let expected = try Self.indexes(in: url)

        // Another program drops the unique index and makes the other one unique.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: "DROP INDEX \"Tag.unique.0\"")
            try db.execute(sql: "DROP INDEX \"Tag.unique_0\"")
            try db.execute(sql: "CREATE UNIQUE INDEX \"Tag.unique_0\" ON \"Tag\"(\"rank\")")
        }
        try queue.close()

        // Read-only: nothing is written, and reading still works.
        let readOnly = try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url, isReadOnly: true)])
        #expect(try readOnly.newBackgroundContext().count(entityName: "Tag") == 0)
        try readOnly.close()
        #expect(try Self.indexes(in: url) != expected)

        let container = try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url)])
        #expect(try Self.indexes(in: url) == expected)
        try Self.saveTag("swift", in: container)
        try Self.saveTag("linux", in: container)  // equal ranks are allowed again
        #expect(throws: StrataError.self) { try Self.saveTag("swift", in: container) }
    }

    @Test func duplicatesBehindAMissingUniqueIndexAreReportedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Tags.sqlite")
        let schema = try Self.tagSchema()
        let container = try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url)])
        try Self.saveTag("swift", in: container)
        try container.close()
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: "DROP INDEX \"Tag.unique.0\"")
            let columns = try db.columns(in: "Tag").map(\.name).filter { $0 != "_pk" }
            let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            try db.execute(sql: "INSERT INTO \"Tag\" (\(list)) SELECT \(list) FROM \"Tag\"")
        }
        try queue.close()
        let bytes = try Data(contentsOf: url)
        do {
            _ = try PersistentContainer(name: "Tags", schema: schema, storeDescriptions: [.sqlite(url)])
            Issue.record("a store breaking its uniqueness constraint was opened")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
            #expect(error.message.contains("Tag.unique.0"))
        }
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func aFormatOneStoreIsUpgradedOnOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        let schema = try Schema([Movie.self])
        let layout = StoreLayout(schema: schema)
        do {
            let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            Movie(context: context).title = "Heat"
            try context.save()
            try container.close()
        }
        // Turn it into the store format 1 made: underscore names, no recorded format.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            for index in layout.indexes {
                try db.execute(sql: "DROP INDEX \(quoted(index.name))")
                var former = index
                former.name = index.formerName
                try db.execute(sql: former.sql)
            }
            try db.execute(sql: "DELETE FROM \"_strata_metadata\" WHERE key = 'format'")
        }
        try queue.close()

        let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [.sqlite(url)])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
        try container.close()
        let indexes = try Self.indexes(in: url)
        #expect(indexes == Dictionary(uniqueKeysWithValues: layout.indexes.map { ($0.name, $0.sql) }))
        let format = try DatabaseQueue(path: url.path).read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM \"_strata_metadata\" WHERE key = 'format'")
        }
        #expect(format == Data(StoreLayout.format.utf8))
    }
}
