import Foundation
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

    @Test func versionsReportsTheVersionThatWroteTheStore() throws {
        let result = try runStrata(["versions", store.path, "--model", Self.model.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "Students\nStudents 2 (store)\nStudents 3\nStudents 4 (current)\n")
    }

    @Test func aDryRunPrintsThePlanAndLeavesTheStore() throws {
        let before = try Data(contentsOf: store)
        let result = try runStrata(["migrate", store.path, "--model", Self.model.path, "--dry-run"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("Students 2 → Students 4, 2 stages:"))
        #expect(result.output.contains("entity Teacher added"))
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func migrateRunsThePlanToTheCurrentOrAGivenVersion() throws {
        let toThree = try runStrata(["migrate", store.path, "--model", Self.model.path, "--to", "Students 3"])
        #expect(toThree.status == 0, "\(toThree.errorOutput)")
        #expect(toThree.output.hasSuffix("Migrated to Students 3.\n"))
        #expect(toThree.errorOutput.contains("[1/1] Lightweight: Students 2 to Students 3: schema"))
        #expect(try runStrata(["versions", store.path, "--model", Self.model.path]).output.contains("Students 3 (store)"))

        let toCurrent = try runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(toCurrent.status == 0)
        #expect(try runStrata(["versions", store.path, "--model", Self.model.path]).output.contains("Students 4 (store, current)"))
        let again = try runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(again.output.contains("nothing to migrate"))
    }

    @Test func aStoreOpenInAnotherProcessIsNotMigrated() throws {
        let bundle = try XcodeModelBundle.load(contentsOf: Self.model)
        let schema = try #require(bundle.version(named: "Students 2")).schema
        let container = try PersistentContainer(name: "Students", schema: schema, storeDescriptions: [.sqlite(store)])
        let before = try Data(contentsOf: store)
        let refused = try runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("is open in another container or process"), "\(refused.errorOutput)")
        #expect(try Data(contentsOf: store) == before)
        try container.close()
        let migrated = try runStrata(["migrate", store.path, "--model", Self.model.path])
        #expect(migrated.status == 0, "\(migrated.errorOutput)")
    }

    @Test func badInputIsATypedErrorWithExitStatusOne() throws {
        let unknownVersion = try runStrata(["migrate", store.path, "--model", Self.model.path, "--to", "Students 9"])
        #expect(unknownVersion.status == 1)
        #expect(unknownVersion.errorOutput.contains("has no version Students 9"))
        let missing = try runStrata(["versions", directory.url.appendingPathComponent("none.sqlite").path, "--model", Self.model.path])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.hasPrefix("strata: error: "))
    }
}
