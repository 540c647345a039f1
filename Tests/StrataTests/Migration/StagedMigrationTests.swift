import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The data-stack kit's scenario: v1 keeps each student as a JSON blob; v2 adds name and id
/// fields, filled from the blob by a custom stage; v3 adds an abstract course entity with two
/// subentities and an enrollment entity related to students and courses; v4 drops the blob and
/// adds a teacher entity.
enum StudentVersions: String, ModelVersion {
    case v1 = "Model"
    case v2 = "Model2"
    case v3 = "Model3"
    case v4 = "Model4"

    struct Blob: Codable {
        var name: String
        var id: Int64
    }

    var modelVersion: Schema {
        get throws { try Schema(Self.entities(self)) }
    }

    static func entities(_ version: Self) -> [EntityDescription] {
        var student = EntityDescription(
            name: "Student", attributes: [AttributeDescription(name: "blob", type: .binaryData, isOptional: true)])
        if version != .v1 {
            student.attributes += [
                AttributeDescription(name: "name", type: .string, defaultValue: .string("")),
                AttributeDescription(name: "studentID", type: .integer64, defaultValue: .integer(0)),
            ]
        }
        if version == .v4 { student.attributes.removeAll { $0.name == "blob" } }
        guard version == .v3 || version == .v4 else { return [student] }
        student.relationships = [
            RelationshipDescription(name: "enrollments", destination: "Enrollment", inverse: "student", isToMany: true, deleteRule: .cascade)
        ]
        var entities = [
            student,
            EntityDescription(
                name: "Course", isAbstract: true, attributes: [AttributeDescription(name: "title", type: .string, defaultValue: .string(""))],
                relationships: [
                    RelationshipDescription(name: "enrollments", destination: "Enrollment", inverse: "course", isToMany: true)
                ]),
            EntityDescription(
                name: "Lecture", superentity: "Course", attributes: [AttributeDescription(name: "hall", type: .string, isOptional: true)]),
            EntityDescription(
                name: "Lab", superentity: "Course", attributes: [AttributeDescription(name: "benches", type: .integer16, defaultValue: .integer(0))]),
            EntityDescription(
                name: "Enrollment", attributes: [AttributeDescription(name: "grade", type: .integer16, isOptional: true)],
                relationships: [
                    RelationshipDescription(name: "student", destination: "Student", inverse: "enrollments"),
                    RelationshipDescription(name: "course", destination: "Course", inverse: "enrollments"),
                ]),
        ]
        if version == .v4 {
            entities.append(EntityDescription(name: "Teacher", attributes: [AttributeDescription(name: "name", type: .string, defaultValue: .string(""))]))
        }
        return entities
    }

    static func migrationStages() -> [MigrationStage<Self>] {
        [
            v1.migrationStage(
                toVersion: .v2, label: "Custom Migration: V1 to V2",
                postMigration: { context in
                    for student in try context.fetch(FetchRequest<ManagedObject>(entityName: "Student")) {
                        guard let data = try student.value(forKey: "blob") as? Data else { continue }
                        let blob = try JSONDecoder().decode(Blob.self, from: data)
                        try student.setValue(blob.name, forKey: "name")
                        try student.setValue(blob.id, forKey: "studentID")
                    }
                }),
            v2.migrationStage(toVersion: .v3, label: "Lightweight Migration: V2 to V3"),
            v3.migrationStage(toVersion: .v4, label: "Lightweight Migration: V3 to V4"),
        ]
    }
}

@Suite(.timeLimit(.minutes(10))) struct StagedMigrationTests {
    let directory: TemporaryDirectory
    var url: URL { directory.url.appendingPathComponent("Students.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    func open(_ version: StudentVersions) throws -> PersistentContainer {
        try PersistentContainer(name: "Students", schema: version.modelVersion, storeDescriptions: [.sqlite(url)])
    }

    func insert(_ entity: String, in context: ObjectContext, _ values: [String: Any]) throws -> ManagedObject {
        let object = ManagedObject(entity: try #require(context.schema.entity(named: entity)))
        context.insert(object)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    func makeV1Store(students: [(String, Int64)]) throws {
        let container = try open(.v1)
        let context = container.newBackgroundContext()
        for (name, id) in students {
            _ = try insert("Student", in: context, ["blob": try JSONEncoder().encode(StudentVersions.Blob(name: name, id: id))])
        }
        try context.save()
        try container.close()
    }

    func fileBytes() throws -> Data { try Data(contentsOf: url) }

    @Test func detectsTheVersionThatWroteAStore() throws {
        try makeV1Store(students: [("Ada", 1)])
        #expect(try StudentVersions.versionsForStore(at: url) == [.v1])
        let container = try open(.v1)
        defer { try? container.close() }
        #expect(try StudentVersions.versions(compatibleWith: container) == [.v1])
        #expect(StudentVersions.currentVersion == .v4)
    }

    @Test func anOldStoreOpensAtItsOwnVersionWithoutMigrating() throws {
        try makeV1Store(students: [("Ada", 1)])
        // The current schema refuses it…
        #expect(throws: StrataError.self) { try open(.v4) }
        // …its own version reads and writes it, and leaves it at v1.
        let container = try open(.v1)
        let context = container.newBackgroundContext()
        _ = try insert("Student", in: context, ["blob": Data("{}".utf8)])
        try context.save()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Student")) == 2)
        try container.close()
        #expect(try StudentVersions.versionsForStore(at: url) == [.v1])
    }

    @Test func theKitsScenarioMigratesFromV1ToV4() throws {
        try makeV1Store(students: [("Ada", 1), ("Grace", 2)])
        let manager = StudentVersions.migrationManager()
        let plan = try manager.plan(forStoreAt: url)
        #expect(plan.stages.map(\.label) == [
            "Custom Migration: V1 to V2", "Lightweight Migration: V2 to V3", "Lightweight Migration: V3 to V4",
        ])
        #expect(plan.description.contains("property Student.name added"))

        let reports = LockedBox<[MigrationProgress]>([])
        try manager.migrateStore(at: url) { progress in reports.withLock { $0.append(progress) } }
        #expect(try StudentVersions.versionsForStore(at: url) == [.v4])
        #expect(reports.withLock { $0 }.map(\.phase).contains("post-migration"))
        #expect(reports.withLock { $0 }.last?.stage == 3)

        let container = try open(.v4)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try context.fetch(
            FetchRequest<ManagedObject>(entityName: "Student", sortDescriptors: [FetchSortDescriptor(key: "name")]))
        #expect(try students.map { try $0.value(forKey: "name") as? String } == ["Ada", "Grace"])
        #expect(try students.map { try $0.value(forKey: "studentID") as? Int64 } == [1, 2])
        #expect(context.schema.entity(named: "Student")?.attribute(named: "blob") == nil)

        // The entities v3 and v4 added work: subentities, relationships, the new teacher.
        let lab = try insert("Lab", in: context, ["title": "Chemistry", "benches": Int16(12)])
        let enrollment = try insert("Enrollment", in: context, ["grade": Int16(5)])
        try enrollment.setValue(lab, forKey: "course")
        try enrollment.setValue(students[0], forKey: "student")
        _ = try insert("Teacher", in: context, ["name": "Barbara"])
        try context.save()
        let check = container.newBackgroundContext()
        let courses = try check.fetch(FetchRequest<ManagedObject>(entityName: "Course"))
        #expect(courses.count == 1)
        #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "Enrollment", predicate: try FetchPredicate(format: "student.name == 'Ada'"))) == 1)
    }

    @Test func migratingAStoreAtTheTargetDoesNothing() throws {
        try makeV1Store(students: [("Ada", 1)])
        let before = try fileBytes()
        let plan = try StudentVersions.migrationManager().migrateStore(at: url, to: .v1)
        #expect(plan.stages.isEmpty)
        #expect(try fileBytes() == before)
    }

    @Test func aStoreOpenInAContainerIsNotMigratedAndNoneOpensOneMigrating() throws {
        try makeV1Store(students: [("Ada", 1)])
        let container = try open(.v1)
        let before = try fileBytes()
        let refused = #expect(throws: StrataError.self) { try StudentVersions.migrationManager().migrateStore(at: url) }
        #expect(refused?.code == .storeInUse)
        #expect(try fileBytes() == before)
        try container.close()

        // While a migration holds the store, containers are turned away (as a migration in
        // another process would turn them away), and read-only opens too.
        let migrating = try StoreFileLock(url: url, exclusive: true)
        for readOnly in [false, true] {
            let opening = #expect(throws: StrataError.self) {
                try PersistentContainer(
                    name: "Students", schema: try StudentVersions.v1.modelVersion, storeDescriptions: [.sqlite(url, isReadOnly: readOnly)])
            }
            #expect(opening?.code == .storeInUse)
            #expect(opening?.message.contains("is being migrated") == true)
        }
        migrating.release()
        try StudentVersions.migrationManager().migrateStore(at: url)
        #expect(try StudentVersions.versionsForStore(at: url) == [.v4])
        // Two containers of one process share the store as before.
        let first = try open(.v4)
        let second = try open(.v4)
        try first.close()
        try second.close()
    }

    @Test func aFailingCustomStageLeavesTheStoreByteIdentical() throws {
        try makeV1Store(students: [("Ada", 1)])
        // A blob that is not JSON makes the v1 → v2 stage's code throw.
        let container = try open(.v1)
        let context = container.newBackgroundContext()
        _ = try insert("Student", in: context, ["blob": Data("not json".utf8)])
        try context.save()
        try container.close()
        let before = try fileBytes()
        let error = #expect(throws: StrataError.self) { try StudentVersions.migrationManager().migrateStore(at: url) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("Custom Migration: V1 to V2") == true)
        #expect(try fileBytes() == before)
        #expect(try StudentVersions.versionsForStore(at: url) == [.v1])
        // No migration copy is left next to the store.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            .filter { $0.contains("strata-migrating") }
        #expect(leftovers.isEmpty)
    }

    /// A custom stage that throws leaves the folder as it found it: the same files, the store
    /// byte for byte — no `-wal` or `-shm` files from reading it.
    @Test func aThrowingCustomStageLeavesTheFolderAsItWas() throws {
        struct Refused: Error {}
        try makeV1Store(students: [("Ada", 1)])
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(files == ["Students.sqlite"])
        let bytes = try fileBytes()
        let manager = StagedMigrationManager<StudentVersions>([
            StudentVersions.v1.migrationStage(toVersion: .v2, label: "Refuse", preMigration: { _ in throw Refused() })
        ])
        let error = #expect(throws: StrataError.self) { try manager.migrateStore(at: url) }
        #expect(error?.code == .migrationFailed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        #expect(try fileBytes() == bytes)
    }

    @Test func migratingBackwardsIsRefused() throws {
        try makeV1Store(students: [])
        try StudentVersions.migrationManager().migrateStore(at: url, to: .v2)
        let error = #expect(throws: StrataError.self) { try StudentVersions.migrationManager().migrateStore(at: url, to: .v1) }
        #expect(error?.code == .migrationFailed)
        #expect(try StudentVersions.versionsForStore(at: url) == [.v2])
    }
}

/// The same four versions, read from `Students.xcdatamodeld`.
enum StudentBundleVersions: String, ModelVersion {
    case v1 = "Students"
    case v2 = "Students 2"
    case v3 = "Students 3"
    case v4 = "Students 4"

    static func bundle() throws -> XcodeModelBundle {
        guard let fixtures = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw StrataError(.modelFileNotFound, "The test bundle has no Fixtures folder.")
        }
        return try XcodeModelBundle.load(contentsOf: fixtures.appendingPathComponent("Students.xcdatamodeld"))
    }

    var modelVersion: Schema {
        get throws {
            guard let version = try Self.bundle().version(named: rawValue) else {
                throw StrataError(.modelFileNotFound, "Students.xcdatamodeld has no version \(rawValue)")
            }
            return version.schema
        }
    }
}

extension StagedMigrationTests {
    @Test func theXcodeModelHasTheSameVersionsAsTheModelInCode() throws {
        let bundle = try StudentBundleVersions.bundle()
        #expect(bundle.versions.map(\.name) == ["Students", "Students 2", "Students 3", "Students 4"])
        #expect(bundle.currentVersionName == "Students 4")
        for (fromBundle, inCode) in zip(StudentBundleVersions.allCases, StudentVersions.allCases) {
            let difference = try inCode.modelVersion.difference(from: fromBundle.modelVersion)
            #expect(difference.isEmpty, "\(fromBundle.rawValue): \(difference)")
        }
    }

    @Test func aStoreWrittenInCodeMigratesThroughTheXcodeModelsVersions() throws {
        try makeV1Store(students: [("Ada", 1)])
        try StudentVersions.migrationManager().migrateStore(at: url, to: .v2)
        #expect(try StudentBundleVersions.versionsForStore(at: url) == [.v2])
        let plan = try StudentBundleVersions.migrationManager().migrateStore(at: url)
        #expect(plan.stages.map(\.label) == ["Lightweight: Students 2 to Students 3", "Lightweight: Students 3 to Students 4"])
        #expect(try StudentBundleVersions.versionsForStore(at: url) == [.v4])
        #expect(try StudentVersions.versionsForStore(at: url) == [.v4])
    }
}

/// Three versions, the last two with one schema, and a stage between them that counts its runs.
enum RepeatedSchemaVersions: String, ModelVersion {
    case v1, v2, v3

    static let runs = LockedBox(0)

    var modelVersion: Schema {
        get throws {
            var attributes = [AttributeDescription(name: "name", type: .string, defaultValue: .string(""))]
            if self != .v1 { attributes.append(AttributeDescription(name: "score", type: .integer64, defaultValue: .integer(0))) }
            return try Schema([EntityDescription(name: "Player", attributes: attributes)])
        }
    }

    static func migrationStages() -> [MigrationStage<Self>] {
        [v2.migrationStage(toVersion: .v3, label: "Count", postMigration: { _ in runs.withLock { $0 += 1 } })]
    }
}

extension StagedMigrationTests {
    @Test func versionsThatShareASchemaDoNotRunTheirStageAgain() throws {
        let container = try PersistentContainer(
            name: "Players", schema: try RepeatedSchemaVersions.v1.modelVersion, storeDescriptions: [.sqlite(url)])
        try container.close()
        let manager = RepeatedSchemaVersions.migrationManager()
        try manager.migrateStore(at: url)
        let runs = RepeatedSchemaVersions.runs.withLock { $0 }
        #expect(try manager.plan(forStoreAt: url).stages.isEmpty)
        try manager.migrateStore(at: url)
        #expect(RepeatedSchemaVersions.runs.withLock { $0 } == runs)
    }
}
