import Foundation
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// Staged migrations of PostgreSQL stores: the migration conformance suite (the same checks as
/// SQLite's), and what is particular to a store several servers share.
@Suite struct PostgresMigrationTests {
    @Test(arguments: MigrationConformanceSuite.Check.allCases)
    func conforms(check: MigrationConformanceSuite.Check) async throws {
        try await offThePool {
            let databases = Databases()
            let suite = MigrationConformanceSuite { try databases.make().description() }
            try suite.run(check)
        }
    }

    /// v1: `Book(title)`; v2: `title` renamed to `name`, a defaulted `pages`.
    enum Versions: String, ModelVersion {
        case v1, v2

        var modelVersion: Schema {
            get throws {
                guard self == .v2 else {
                    return try Schema([
                        EntityDescription(name: "Book", attributes: [AttributeDescription(name: "title", type: .string, defaultValue: .string(""))])
                    ])
                }
                return try Schema([
                    EntityDescription(
                        name: "Book",
                        attributes: [
                            AttributeDescription(name: "name", type: .string, defaultValue: .string(""), renamingIdentifier: "title"),
                            AttributeDescription(name: "pages", type: .integer64, defaultValue: .integer(7)),
                        ])
                ])
            }
        }
    }

    private func makeV1Store(_ database: PostgresTestDatabase, titles: [String]) throws {
        let container = try PersistentContainer(name: "Books", schema: try Versions.v1.modelVersion, storeDescriptions: [database.description()])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for title in titles {
            let book = ManagedObject(entity: try #require(context.schema.entity(named: "Book")))
            context.insert(book)
            try book.setValue(title, forKey: "title")
        }
        try context.save()
    }

    @Test func aStoreOpenOnAnyServerIsNotMigrated() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            try makeV1Store(database, titles: ["Dune"])
            // Another server has the store open: a container of its own on the same schema.
            let otherServer = try PersistentContainer(
                name: "Books", schema: try Versions.v1.modelVersion, storeDescriptions: [database.description()])
            let refused = #expect(throws: StrataError.self) { try Versions.migrationManager().migrateStore(database.description()) }
            #expect(refused?.code == .storeInUse)
            #expect(try Versions.versionsForStore(database.description()) == [.v1])
            try otherServer.close()

            try Versions.migrationManager().migrateStore(database.description())
            #expect(try Versions.versionsForStore(database.description()) == [.v2])
            let container = try PersistentContainer(name: "Books", schema: try Versions.v2.modelVersion, storeDescriptions: [database.description()])
            defer { try? container.close() }
            let books = try container.newBackgroundContext().fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            #expect(try books.map { try $0.value(forKey: "name") as? String } == ["Dune"])
            #expect(try books.map { try $0.value(forKey: "pages") as? Int64 } == [7])
        }
    }

    @Test func aServerThatOpensTheStoreDuringAMigrationWaitsForIt() async throws {
        let database = try PostgresTestDatabase()
        try await offThePool { try makeV1Store(database, titles: ["Dune"]) }
        // A migration elsewhere holds the store to itself, as `withExclusiveAccess` does.
        let migration = try PostgresConnectionPool(
            configuration: database.configuration, instrumentation: .silent(kind: "postgres", name: "test"), sessionSetup: [])
        defer { migration.close() }
        let key = PostgresStore.presenceLockKey(forSchemaNamed: database.schemaName)
        let opened = LockedBox(false)
        try await offThePool {
            try migration.withConnection { session in
                var bindings = PostgresBindings()
                bindings.append(integer: key)
                try session.query("SELECT pg_advisory_lock($1)", bindings)
                let opening = Thread {
                    if let container = try? PersistentContainer(
                        name: "Books", schema: try Versions.v1.modelVersion, storeDescriptions: [database.description()])
                    {
                        opened.withLock { $0 = true }
                        try? container.close()
                    }
                }
                opening.start()
                Thread.sleep(forTimeInterval: 0.5)
                #expect(opened.withLock { $0 } == false, "the store opened while a migration held it")
                try session.query("SELECT pg_advisory_unlock($1)", bindings)
            }
            let deadline = Date().addingTimeInterval(60)
            while !opened.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(opened.withLock { $0 }, "the store did not open once the migration was over")
        }
    }

    @Test func aServerThatCannotOpenTheStoreBeforeTheMigrationEndsGetsStoreInUse() async throws {
        let database = try PostgresTestDatabase()
        try await offThePool { try makeV1Store(database, titles: ["Dune"]) }
        let migration = try PostgresConnectionPool(
            configuration: database.configuration, instrumentation: .silent(kind: "postgres", name: "test"), sessionSetup: [])
        defer { migration.close() }
        try await offThePool {
            try migration.withConnection { session in
                var bindings = PostgresBindings()
                bindings.append(integer: PostgresStore.presenceLockKey(forSchemaNamed: database.schemaName))
                try session.query("SELECT pg_advisory_lock($1)", bindings)
                defer { _ = try? session.query("SELECT pg_advisory_unlock($1)", bindings) }
                var configuration = database.configuration
                configuration.pool.acquireTimeout = .seconds(1)
                let error = #expect(throws: StrataError.self) {
                    try PersistentContainer(name: "Books", schema: try Versions.v1.modelVersion, storeDescriptions: [.postgres(configuration)])
                }
                #expect(error?.code == .storeInUse)
                #expect(error?.message.contains("being migrated") == true)
            }
        }
    }

    @Test func aSaveOverAStoreMigratedBehindTheContainersBackIsRefused() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            try makeV1Store(database, titles: ["Dune"])
            let container = try PersistentContainer(name: "Books", schema: try Versions.v1.modelVersion, storeDescriptions: [database.description()])
            defer { try? container.close() }
            // What a migration that ran while this server had lost its connection leaves: the
            // store records another schema.
            try database.execute("UPDATE \(quoted(PostgresLayout.metadataTable)) SET value = 'another'::bytea WHERE key = 'versionHash'")
            let context = container.newBackgroundContext()
            let book = ManagedObject(entity: try #require(context.schema.entity(named: "Book")))
            context.insert(book)
            try book.setValue("Emma", forKey: "title")
            let error = #expect(throws: StrataError.self) { try context.save() }
            #expect(error?.code == .incompatibleSchema)
            let count = try database.execute("SELECT count(*) FROM \"Book\"").rows.first.flatMap { try? $0.decode(Int64.self) }
            #expect(count == 1)
        }
    }

    @Test func aMigrationCopyLeftBehindIsRemovedByTheNextMigration() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            try makeV1Store(database, titles: ["Dune"])
            // A migration with a custom stage that died half-way left its copy behind.
            let provider = PostgresStoreProvider(configuration: database.configuration)
            let abandoned = try #require(try provider.makeMigrationCopy() as? PostgresStoreProvider)
            let manager = StagedMigrationManager<Versions>([
                Versions.v1.migrationStage(toVersion: .v2, label: "Count", postMigration: { _ in })
            ])
            try manager.migrateStore(database.description())
            #expect(try Versions.versionsForStore(database.description()) == [.v2])
            let remaining = try database.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = '\(abandoned.configuration.schemaName)'"
            ).rows.first.flatMap { try? $0.decode(Int64.self) }
            #expect(remaining == 0)
            // Nor is the copy this migration worked on, or the store it replaced.
            let prefix = PostgresStore.migrationCopyPrefix(of: database.schemaName)
            let copies = try database.execute(
                "SELECT count(*) FROM pg_namespace WHERE starts_with(nspname, '\(prefix)')"
            ).rows.first.flatMap { try? $0.decode(Int64.self) }
            #expect(copies == 0)
        }
    }
}
