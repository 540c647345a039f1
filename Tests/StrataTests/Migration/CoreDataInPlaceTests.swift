import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// The data-stack kit's staged-migration scenario on a store Core Data wrote: v1 keeps each
/// student's names as JSON in `data`; v2 puts students under a new `Person` parent with names,
/// filled from the JSON by a custom stage. The kit's test opens its v1 Core Data store with the
/// stack and expects the migrated students; here the stack does the same, converting in place.
enum KitStudentVersions: String, ModelVersion {
    case v1 = "Model"
    case v2 = "Model2"

    struct Imported: Codable {
        var id: Int64
        var firstName: String
        var lastName: String
    }

    var modelVersion: Schema {
        get throws {
            let data = AttributeDescription(name: "data", type: .binaryData, isOptional: true)
            guard self == .v2 else {
                return try Schema([
                    EntityDescription(
                        name: "Student",
                        attributes: [data, AttributeDescription(name: "isOldData", type: .boolean, defaultValue: .boolean(true))])
                ])
            }
            return try Schema([
                EntityDescription(
                    name: "Person",
                    attributes: [
                        AttributeDescription(name: "firstName", type: .string, isOptional: true),
                        AttributeDescription(name: "lastName", type: .string, isOptional: true),
                    ]),
                EntityDescription(
                    name: "Student", superentity: "Person",
                    attributes: [
                        data, AttributeDescription(name: "isOldData", type: .boolean, defaultValue: .boolean(true)),
                        AttributeDescription(name: "id", type: .integer64, defaultValue: .integer(-1)),
                    ]),
            ])
        }
    }

    static func migrationStages() -> [MigrationStage<Self>] {
        [
            v1.migrationStage(
                toVersion: .v2, label: "Custom Migration: V1 to V2",
                postMigration: { context in
                    for student in try context.fetch(FetchRequest<ManagedObject>(entityName: "Student")) {
                        guard let data = try student.value(forKey: "data") as? Data else { continue }
                        let imported = try JSONDecoder().decode(Imported.self, from: data)
                        try student.setValue(imported.firstName, forKey: "firstName")
                        try student.setValue(imported.lastName, forKey: "lastName")
                        try student.setValue(imported.id, forKey: "id")
                        try student.setValue(false, forKey: "isOldData")
                    }
                })
        ]
    }
}

@Suite(.timeLimit(.minutes(10))) struct CoreDataInPlaceTests {
    static let students = [
        KitStudentVersions.Imported(id: 1, firstName: "Ada", lastName: "Lovelace"),
        KitStudentVersions.Imported(id: 2, firstName: "Alan", lastName: "Turing"),
        KitStudentVersions.Imported(id: 3, firstName: "Grace", lastName: "Hopper"),
    ]
    static let storeUUID = "9C1B8E4A-0000-4000-8000-0000000057D1"

    let directory: TemporaryDirectory
    var url: URL { directory.url.appendingPathComponent("Students.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Writes the v1 store as Core Data lays it out (`Fixtures/CoreData/FORMAT.md`), in WAL
    /// mode as Core Data keeps it, with the last student still in the WAL.
    func makeCoreDataStore() throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: """
                CREATE TABLE ZSTUDENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISOLDDATA INTEGER, ZDATA BLOB );
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                """)
            let metadata: [String: Any] = [
                "NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3,
                "NSStoreModelVersionHashes": ["Student": Data(repeating: 7, count: 32)],
            ]
            let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [Self.storeUUID, plist])
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Student', 0, ?)", arguments: [Self.students.count])
            try db.checkpoint(.truncate)
            for (index, student) in Self.students.enumerated() {
                try db.execute(
                    sql: "INSERT INTO ZSTUDENT VALUES (?, 1, 1, 1, ?)", arguments: [index + 1, try JSONEncoder().encode(student)])
            }
        }
        // Left open: closing would checkpoint the WAL. Copy the three files as they are now.
        let copy = directory.url.appendingPathComponent("snapshot")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.appendingPathComponent("Students.sqlite" + suffix).path)
        }
        try queue.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        for suffix in ["", "-wal"] {
            try FileManager.default.moveItem(atPath: copy.appendingPathComponent("Students.sqlite" + suffix).path, toPath: url.path + suffix)
        }
        try FileManager.default.removeItem(at: copy)
        #expect((SQLiteStore.fileSize(atPath: url.path + "-wal") ?? 0) > 0)
    }

    /// The folder's files, and their bytes: the Core Data store's file and WAL — but its
    /// shared-memory index, which any reader of a WAL database may make.
    func folderContents() throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where !name.hasSuffix("-shm") {
            contents[name] = try Data(contentsOf: directory.url.appendingPathComponent(name))
        }
        return contents
    }

    /// The students of the converted, migrated store: names, ids and whether still old.
    func migratedStudents(in context: ObjectContext) throws -> [String] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: "Student", sortDescriptors: [FetchSortDescriptor(key: "id")]))
            .map { student in
                let first = try student.value(forKey: "firstName") as? String ?? "?"
                let last = try student.value(forKey: "lastName") as? String ?? "?"
                let id = try student.value(forKey: "id") as? Int64 ?? -9
                let old = try student.value(forKey: "isOldData") as? Bool ?? true
                return "\(id) \(first) \(last)\(old ? " old" : "")"
            }
    }

    @Test func theVersionThatWroteACoreDataStoreIsFoundWithoutWritingToIt() throws {
        try makeCoreDataStore()
        let before = try folderContents()
        #expect(try KitStudentVersions.versionsForStore(at: url) == [.v1])
        #expect(try KitStudentVersions.ambiguity(among: [.v1]) == nil)
        #expect(try folderContents() == before)
        let plan = try KitStudentVersions.migrationManager().plan(forStoreAt: url)
        #expect(plan.source == .v1)
        #expect(plan.stages.map(\.label) == ["Custom Migration: V1 to V2"])
    }

    /// The kit's `testMakeNewContainerOnTopOfOldContainer`, with the kit's code unchanged but
    /// for Strata's names.
    @Test @MainActor func theStackConvertsAndMigratesTheCoreDataStoreInPlace() throws {
        try makeCoreDataStore()
        let stack = try BasicDataStack(storeURL: url, versionKey: KitStudentVersions.self, mainAuthor: "viewContext1")
        let context = stack.viewContext
        #expect(try migratedStudents(in: context) == ["1 Ada Lovelace", "2 Alan Turing", "3 Grace Hopper"])
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Person")) == 3)
        try stack.close()
        #expect(try KitStudentVersions.versionsForStore(at: url) == [.v2])
        // The Core Data file is gone once the conversion is complete; only the store is left.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(names.filter { !$0.hasPrefix("Students.sqlite") }.isEmpty, "\(names)")
        #expect(!names.contains { $0.contains("coredata") || $0.contains("strata-") }, "\(names)")
        // It opens again as the Strata store it is now.
        let again = try BasicDataStack(storeURL: url, versionKey: KitStudentVersions.self, mainAuthor: "viewContext1")
        #expect(try migratedStudents(in: again.viewContext).count == 3)
        try again.close()
    }

    @Test func theCoreDataFileCanBeKeptBesideTheConvertedStore() throws {
        try makeCoreDataStore()
        var description = StoreDescription.sqlite(url)
        description.keepsConvertedCoreDataStore = true
        try KitStudentVersions.migrationManager().migrateStore(description)
        let kept = URL(fileURLWithPath: url.path + ".coredata")
        #expect(FileManager.default.fileExists(atPath: kept.path))
        // The kept file is the Core Data store, with what its WAL held.
        let rows = try DatabaseQueue(path: kept.path).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZSTUDENT") }
        #expect(rows == Self.students.count)
        #expect(try KitStudentVersions.versionsForStore(at: url) == [.v2])
    }

    @Test func aContainerConvertsAtItsOwnVersionWithoutMigrating() throws {
        try makeCoreDataStore()
        let container = try PersistentContainer(name: "Students", schema: try KitStudentVersions.v1.modelVersion, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))
        #expect(students.count == 3)
        let names = try students.map { try JSONDecoder().decode(KitStudentVersions.Imported.self, from: try #require(try $0.value(forKey: "data") as? Data)).firstName }
        #expect(names.sorted() == ["Ada", "Alan", "Grace"])
        // It is a Strata store now: written to and reopened as one.
        try students[0].setValue(false, forKey: "isOldData")
        try context.save()
        try container.close()
        #expect(try KitStudentVersions.versionsForStore(at: url) == [.v1])
        #expect(try SQLiteStore.recordedSchema(at: url).versionHash == (try KitStudentVersions.v1.modelVersion.versionHash))
    }

    @Test func aReadOnlyOpenNeverConverts() throws {
        try makeCoreDataStore()
        let before = try folderContents()
        let container = try PersistentContainer(
            name: "Students", schema: try KitStudentVersions.v1.modelVersion, storeDescriptions: [.sqlite(url, isReadOnly: true)])
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))
        #expect(students.count == 3)
        try students[0].setValue(false, forKey: "isOldData")
        let error = #expect(throws: StrataError.self) { try context.save() }
        #expect(error?.code == .storeNotWritable)
        try container.close()
        #expect(try folderContents() == before)
    }

    @Test func aFailingStageLeavesTheCoreDataStoreAsItWas() throws {
        struct Refused: Error {}
        try makeCoreDataStore()
        let before = try folderContents()
        let manager = StagedMigrationManager<KitStudentVersions>([
            KitStudentVersions.v1.migrationStage(toVersion: .v2, label: "Refuse", postMigration: { _ in throw Refused() })
        ])
        let error = #expect(throws: StrataError.self) { try manager.migrateStore(at: url) }
        #expect(error?.code == .migrationFailed)
        #expect(try folderContents() == before)
        #expect(try KitStudentVersions.versionsForStore(at: url) == [.v1])
    }

    @Test func aSchemaThatDidNotWriteTheStoreIsRefusedAndNothingChanges() throws {
        try makeCoreDataStore()
        let before = try folderContents()
        let error = #expect(throws: StrataError.self) {
            try PersistentContainer(name: "Students", schema: try KitStudentVersions.v2.modelVersion, storeDescriptions: [.sqlite(url)])
        }
        #expect(error?.code == .incompatibleSchema)
        #expect(try folderContents() == before)
    }

    /// Versions that differ only in what Core Data's tables do not show both fit, and the
    /// reason says what tells them apart.
    @Test func versionsTheTablesCannotTellApartAreAllReportedWithTheReason() throws {
        enum Twins: String, ModelVersion {
            case first, second
            var modelVersion: Schema {
                get throws {
                    try Schema([
                        EntityDescription(
                            name: "Student",
                            attributes: [
                                AttributeDescription(name: "data", type: .binaryData, isOptional: self == .first),
                                AttributeDescription(name: "isOldData", type: .boolean, defaultValue: .boolean(true)),
                            ])
                    ])
                }
            }
        }
        try makeCoreDataStore()
        let versions = try Twins.versionsForStore(at: url)
        #expect(versions == [.first, .second])
        let reason = try #require(try Twins.ambiguity(among: versions))
        #expect(reason.contains("first, second all fit"))
        #expect(reason.contains("Student.data"))
    }

    /// A process killed after the converted store took the Core Data store's place leaves the
    /// Core Data file under its second name; the next open finishes the job.
    @Test(arguments: [false, true]) func anInterruptedConversionIsFinishedByTheNextOpen(keeping: Bool) throws {
        try makeCoreDataStore()
        var description = StoreDescription.sqlite(url)
        description.keepsConvertedCoreDataStore = true
        try KitStudentVersions.migrationManager().migrateStore(description, to: .v1)
        // As the kill leaves it: the Core Data file still under its name while converting.
        let kept = URL(fileURLWithPath: url.path + ".coredata")
        let converting = URL(fileURLWithPath: url.path + ".coredata.strata-converting")
        try FileManager.default.moveItem(at: kept, to: converting)
        description.keepsConvertedCoreDataStore = keeping
        let container = try PersistentContainer(
            name: "Students", schema: try KitStudentVersions.v1.modelVersion, storeDescriptions: [description])
        try container.close()
        #expect(!FileManager.default.fileExists(atPath: converting.path))
        #expect(FileManager.default.fileExists(atPath: kept.path) == keeping)
    }
}
