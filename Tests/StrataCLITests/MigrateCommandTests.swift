import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCLI

/// `strata versions` and `strata migrate`, run as processes on a store of the kit's student
/// model and its Xcode model bundle.
@Suite(.timeLimit(.minutes(10))) struct MigrateCommandTests {
    let directory: TemporaryDirectory
    var store: URL { directory.url.appendingPathComponent("Students.sqlite") }
    /// The test fixture of StrataTests: the four versions of the student model.
    static let model = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("StrataTests/Fixtures/Students.xcdatamodeld")

    init() throws {
        directory = try TemporaryDirectory()
        let bundle = try XcodeModelBundle.load(contentsOf: Self.model)
        let schema = try #require(bundle.version(named: "Students 2")).schema
        let container = try PersistentContainer(name: "Students", schema: schema, storeDescriptions: [.sqlite(store)])
        let context = container.newBackgroundContext()
        let student = ManagedObject(entity: try #require(schema.entity(named: "Student")))
        context.insert(student)
        try student.setValue("Ada", forKey: "name")
        try context.save()
        try container.close()
    }

    @Test func versionsReportsTheVersionThatWroteTheStore() async throws {
        let result = try await runStrata(["versions", store.path, "--model", Self.model.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "Students\nStudents 2 (store)\nStudents 3\nStudents 4 (current)\n")
    }

    @Test func aDryRunPrintsThePlanAndLeavesTheStore() async throws {
        let before = try Data(contentsOf: store)
        let result = try await runStrata(["migrate", store.path, "--model", Self.model.path, "--dry-run"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("Students 2 → Students 4, 2 stages:"))
        #expect(result.output.contains("entity Teacher added"))
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func migrateRunsThePlanToTheCurrentOrAGivenVersion() async throws {
        let toThree = try await runStrata(["migrate", store.path, "--model", Self.model.path, "--to", "Students 3"])
        #expect(toThree.status == 0, "\(toThree.errorOutput)")
        #expect(toThree.output.hasSuffix("Migrated to Students 3.\n"))
        #expect(toThree.errorOutput.contains("[1/1] Lightweight: Students 2 to Students 3: schema"))
        #expect(try await runStrata(["versions", store.path, "--model", Self.model.path]).output.contains("Students 3 (store)"))

        let toCurrent = try await runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(toCurrent.status == 0)
        #expect(try await runStrata(["versions", store.path, "--model", Self.model.path]).output.contains("Students 4 (store, current)"))
        let again = try await runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(again.output.contains("nothing to migrate"))
    }

    @Test func aStoreOpenInAnotherProcessIsNotMigrated() async throws {
        let bundle = try XcodeModelBundle.load(contentsOf: Self.model)
        let schema = try #require(bundle.version(named: "Students 2")).schema
        let container = try PersistentContainer(name: "Students", schema: schema, storeDescriptions: [.sqlite(store)])
        let before = try Data(contentsOf: store)
        let refused = try await runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("is open in another container or process"), "\(refused.errorOutput)")
        #expect(try Data(contentsOf: store) == before)
        try container.close()
        let migrated = try await runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(migrated.status == 0, "\(migrated.errorOutput)")
    }

    @Test func badInputIsATypedErrorWithExitStatusOne() async throws {
        let unknownVersion = try await runStrata(["migrate", store.path, "--model", Self.model.path, "--to", "Students 9"])
        #expect(unknownVersion.status == 1)
        #expect(unknownVersion.errorOutput.contains("has no version Students 9"))
        let missing = try await runStrata(["versions", directory.url.appendingPathComponent("none.sqlite").path, "--model", Self.model.path])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.hasPrefix("strata: error: "))
    }

    /// A plan that removes an attribute holding data is refused without --force, and the dry
    /// run says what would be lost.
    @Test func aPlanThatDropsDataIsRefusedWithoutForce() async throws {
        let bundle = try XcodeModelBundle.load(contentsOf: Self.model)
        let schema = try #require(bundle.version(named: "Students 2")).schema
        let container = try PersistentContainer(name: "Students", schema: schema, storeDescriptions: [.sqlite(store)])
        let context = container.newBackgroundContext()
        let student = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Student")).first)
        try student.setValue(Data("{}".utf8), forKey: "blob")
        try context.save()
        try container.close()
        let before = try Data(contentsOf: store)

        let refused = try await runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(refused.status == 2)
        #expect(refused.errorOutput.contains("Student.blob: 1 object holds a value"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("--force"))
        #expect(try Data(contentsOf: store) == before)
        let dryRun = try await runStrata(["migrate", store.path, "--model", Self.model.path, "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.errorOutput.contains("Warning: the plan removes data the store holds"))
        // Up to the version before the drop, nothing is lost: no refusal.
        #expect(try await runStrata(["migrate", store.path, "--model", Self.model.path, "--to", "Students 3"]).status == 0)
        let forced = try await runStrata(["migrate", store.path, "--model", Self.model.path, "--force"])
        #expect(forced.status == 0, "\(forced.errorOutput)")
        #expect(try await runStrata(["versions", store.path, "--model", Self.model.path]).output.contains("Students 4 (store, current)"))
    }
}

/// `versions`, `info` and `migrate` on a store Core Data wrote with the first version of the
/// student model: detected from its tables, shown with its own identifier, converted in place.
@Suite(.timeLimit(.minutes(10))) struct CoreDataStoreCommandTests {
    static let uuid = "9C1B8E4A-0000-4000-8000-00000000A11C"
    let directory: TemporaryDirectory
    var store: URL { directory.url.appendingPathComponent("Students.sqlite") }
    var model: String { MigrateCommandTests.model.path }

    init() throws {
        directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZSTUDENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBLOB BLOB );
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Student', 0, 2);
                INSERT INTO ZSTUDENT VALUES (1, 1, 1, X'7B7D'), (2, 1, 1, NULL);
                """)
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, X'')", arguments: [Self.uuid])
        }
        try queue.close()
    }

    @Test func versionsAndInfoReadTheCoreDataStore() async throws {
        let before = try Data(contentsOf: store)
        let versions = try await runStrata(["versions", store.path, "--model", model])
        #expect(versions.status == 0, "\(versions.errorOutput)")
        #expect(versions.output == "Students (store)\nStudents 2\nStudents 3\nStudents 4 (current)\n")
        let info = try await runStrata(["info", store.path, "--model", model, "--json"])
        #expect(info.status == 0, "\(info.errorOutput)")
        #expect(info.output.contains("\"identifier\" : \"\(Self.uuid)\"") || info.output.contains("\"identifier\":\"\(Self.uuid)\""), "\(info.output)")
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func migrateConvertsTheCoreDataStoreInPlace() async throws {
        let dryRun = try await runStrata(["migrate", store.path, "--model", model, "--to", "Students 3", "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.errorOutput)")
        #expect(dryRun.output.hasPrefix("A Core Data store written with Students: converted into a Strata store in place, then migrated."))
        #expect(StoreDescription.sqlite(store).isCoreDataStore)

        let migrated = try await runStrata(["migrate", store.path, "--model", model, "--to", "Students 3", "--keep-core-data"])
        #expect(migrated.status == 0, "\(migrated.errorOutput)")
        #expect(migrated.output.hasSuffix("Migrated to Students 3.\n"))
        #expect(!StoreDescription.sqlite(store).isCoreDataStore)
        #expect(FileManager.default.fileExists(atPath: store.path + ".coredata"))
        #expect(try await runStrata(["versions", store.path, "--model", model]).output.contains("Students 3 (store)"))
        let query = try await runStrata(["query", store.path, "Student", "--count"])
        #expect(query.output.contains("2"), "\(query.output) \(query.errorOutput)")
    }
}

