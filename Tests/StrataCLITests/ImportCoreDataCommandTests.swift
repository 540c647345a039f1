import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// `strata import-coredata`, run as a process on a small store laid out as Core Data writes one.
@Suite(.timeLimit(.minutes(10))) struct ImportCoreDataCommandTests {
    let directory: TemporaryDirectory
    var source: URL { directory.url.appendingPathComponent("Notes.sqlite") }
    var model: URL { directory.url.appendingPathComponent("Notes.xcdatamodeld") }
    var output: URL { directory.url.appendingPathComponent("Notes-strata.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCREATED TIMESTAMP, ZTITLE VARCHAR );
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Note', 0, 2);
                INSERT INTO ZNOTE VALUES (1, 1, 1, 700000000.0, 'Groceries'), (2, 1, 1, 700000100.5, 'Ideas');
                INSERT INTO Z_METADATA VALUES (1, '9C1B8E4A-0000-4000-8000-00000000BEEF', X'');
                """)
        }
        try queue.close()
        let version = model.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="created" attributeType="Date" usesScalarValueType="NO"/>
                </entity>
            </model>
            """.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    }

    @Test func importsTheStoreIntoANewStrataStore() async throws {
        let before = try Data(contentsOf: source)
        let result = try await runStrata(["import-coredata", source.path, "--model", model.path, "--output", output.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "Imported 2 objects written with Notes into \(output.path).\n")
        #expect(result.errorOutput == "objects…\nrelationships…\nlinks…\n")  // not a terminal: one line per phase
        #expect(try Data(contentsOf: source) == before)
        let versions = try await runStrata(["versions", output.path, "--model", model.path])
        #expect(versions.output == "Notes (store, current)\n")

        let schema = try XcodeModelBundle.load(contentsOf: model).currentVersion.schema
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [.sqlite(output)])
        defer { try? container.close() }
        let notes = try container.newBackgroundContext().fetch(
            FetchRequest<ManagedObject>(entityName: "Note", sortDescriptors: [FetchSortDescriptor(key: "title")]))
        #expect(try notes.map { try $0.value(forKey: "title") as? String } == ["Groceries", "Ideas"])
        #expect(try notes.last?.value(forKey: "created") as? Date == Date(timeIntervalSinceReferenceDate: 700_000_100.5))
    }

    /// Every reading command works on the Core Data store itself, given its model, and none
    /// writes to it.
    @Test func readingCommandsWorkOnTheCoreDataStoreReadOnly() async throws {
        let before = try Data(contentsOf: source)
        let info = try await runStrata(["info", source.path, "--model", model.path, "--json"])
        #expect(info.status == 0, "\(info.errorOutput)")
        #expect(info.output.contains(#""kind" : "Core Data SQLite store (read-only)""#), "\(info.output)")
        #expect(info.output.contains(#""modelVersion" : "Notes""#), "\(info.output)")
        let query = try await runStrata(["query", source.path, "Note", "--model", model.path, "--where", "title BEGINSWITH 'G'", "--select", "title,created"])
        #expect(query.status == 0, "\(query.errorOutput)")
        #expect(query.output == #"{"title":"Groceries","created":"2023-03-08T20:26:40Z"}"# + "\n")
        let export = try await runStrata(["export", source.path, "--model", model.path, "--format", "csv", "--entity", "Note"])
        #expect(export.status == 0, "\(export.errorOutput)")
        #expect(export.output.split(separator: "\r\n").count == 3)
        let schema = try await runStrata(["schema", source.path, "--model", model.path, "--format", "json"])
        #expect(schema.status == 0, "\(schema.errorOutput)")
        #expect(schema.output.contains("Note"))
        let check = try await runStrata(["check", source.path, "--model", model.path])
        #expect(check.status == 0, "\(check.output)\(check.errorOutput)")
        let refused = try await runStrata(["check", source.path, "--model", model.path, "--repair", "--yes"])
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("only reads"), "\(refused.errorOutput)")
        #expect(try Data(contentsOf: source) == before)
    }

    @Test func aTerminalSeesAProgressBarThatEndsFull() async throws {
        let result = try await runStrataInTerminal(["import-coredata", source.path, "--model", model.path, "--output", output.path])
        #expect(result.status == 0, "\(result.terminal)")
        #expect(result.terminal.contains("\r[------------------------]   0%  objects 0/4"))
        #expect(result.terminal.contains("\r[########################] 100%  links 4/4"))
        #expect(result.terminal.contains("Imported 2 objects written with Notes into"))
    }

    @Test func anExistingOutputOrAMissingVersionIsRefused() async throws {
        try Data("keep".utf8).write(to: output)
        let exists = try await runStrata(["import-coredata", source.path, "--model", model.path, "--output", output.path])
        #expect(exists.status == 1)
        #expect(exists.errorOutput.contains("exists"))
        #expect(try Data(contentsOf: output) == Data("keep".utf8))
        let unknown = try await runStrata([
            "import-coredata", source.path, "--model", model.path, "--version", "Notes 7", "--output", output.path + "2",
        ])
        #expect(unknown.status == 1)
        #expect(unknown.errorOutput.contains("has no version Notes 7"))
    }
}
