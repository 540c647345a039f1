import Foundation
import GRDB
import Testing

@testable import Strata
@testable import StrataCLI

extension CrashSafetyTests {
    /// Rows of the Core Data store the conversion crash test converts and migrates.
    static let conversionRows = 4_000

    /// Writes `MigrateCrashVersions.v1`'s rows as Core Data lays out a store of that model.
    static func makeCoreDataRowStore(at url: URL, rows count: Int) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZROW ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNUMBER INTEGER, ZLABEL VARCHAR );
                CREATE INDEX ZROW_ZNUMBER_INDEX ON ZROW (ZNUMBER);
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                """)
            let metadata: [String: Any] = ["NSStoreType": "SQLite", "NSStoreModelVersionHashes": ["Row": Data(repeating: 1, count: 32)]]
            let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, '9C1B8E4A-0000-4000-8000-0000000C4A5E', ?)", arguments: [plist])
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Row', 0, ?)", arguments: [count])
            let insert = try db.makeStatement(sql: "INSERT INTO ZROW VALUES (?, 1, 1, ?, ?)")
            for number in 0..<count { try insert.execute(arguments: [number + 1, number, "row \(number)"]) }
        }
        try queue.close()
    }

    /// Kills `strata migrate-crash` with SIGKILL at random moments while it converts a store
    /// Core Data wrote and migrates it through a custom stage: after each kill the file is the
    /// untouched Core Data store (byte for byte) or the complete migrated store, never anything
    /// between; and opening the store afterwards leaves no copy of the Core Data file behind.
    @Test func killedConversionsLeaveTheCoreDataStoreOrTheMigratedOne() async throws {
        let (executable, folder) = try Self.executableAndFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let template = folder.appendingPathComponent("Template.sqlite")
        try Self.makeCoreDataRowStore(at: template, rows: Self.conversionRows)
        let original = try Data(contentsOf: template)
        let store = folder.appendingPathComponent("Rows.sqlite")
        var outcomes = (untouched: 0, migrated: 0)
        var duration = Duration.milliseconds(200)
        for round in 0...Self.rounds {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.contains("Rows.sqlite") {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
            try FileManager.default.copyItem(at: template, to: store)
            let started = ContinuousClock.now
            let child = try SaveLoopChild(
                executable: executable, store: store, errorLog: folder.appendingPathComponent("stderr-\(round).txt"),
                command: "migrate-crash")
            defer { child.killIfRunning() }
            let deadline = ContinuousClock.now + Self.startTimeout
            while !child.lines().contains("migrating"), !child.outputEnded, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            if round == 0 {
                try await child.waitForExit(timeout: .seconds(300))
                duration = max(ContinuousClock.now - started, .milliseconds(20))
                #expect(child.lines().contains("migrated"), "stderr: \(child.errorOutput())")
            } else {
                // Up to a little past the end, so that some kills meet the last steps.
                if let ran = try await child.killAtRandomMoment(of: duration, stretch: 1.1, startedAt: started),
                    child.lines().contains("migrated")
                {
                    duration = min(duration, max(ran, .milliseconds(20)))
                }
            }
            let finished = child.lines().contains("migrated")
            if StoreDescription.sqlite(store).isCoreDataStore {
                if finished { Issue.record("Round \(round): the migration reported success, the file is the Core Data store") }
                if try Data(contentsOf: store) != original { Issue.record("Round \(round): the Core Data store was changed") }
                outcomes.untouched += 1
                continue
            }
            let check = try Self.integrityCheck(of: store)
            if check != ["ok"] { Issue.record("Round \(round): integrity_check reports \(check)") }
            let versions = try MigrateCrashVersions.versionsForStore(at: store)
            guard versions == [.v2] else {
                Issue.record("Round \(round): the converted store matches versions \(versions), not v2 alone")
                continue
            }
            outcomes.migrated += 1
            let container = try PersistentContainer(
                name: "Rows", schema: try MigrateCrashVersions.v2.modelVersion, storeDescriptions: [.sqlite(store)])
            let context = container.newBackgroundContext()
            let count = try context.count(for: FetchRequest<ManagedObject>(entityName: "Row"))
            if count != Self.conversionRows { Issue.record("Round \(round): \(count) rows") }
            let unmarked = try context.count(
                for: FetchRequest<ManagedObject>(entityName: "Row", predicate: try FetchPredicate(format: "marked == NO")))
            if unmarked != 0 { Issue.record("Round \(round): \(unmarked) rows the stage did not mark") }
            try container.close()
            // Opening finished whatever the kill interrupted: no copy of the Core Data file left.
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("Rows.sqlite.coredata") }
            if !left.isEmpty { Issue.record("Round \(round): \(left) left after opening") }
        }
        #expect(outcomes.migrated >= 1)
    }
}
