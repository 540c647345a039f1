import Foundation
import Testing

@testable import Strata
@testable import StrataCLI

extension CrashSafetyTests {
    /// Rows of the crash test's store (the issue asks for a migration of 100,000 rows).
    static let migrationRows = 100_000

    /// Kills `strata migrate-crash` with SIGKILL at random moments of a migration of 100,000
    /// rows, with a custom stage (which works on a copy) and without (in place): after each
    /// kill the store must pass the integrity check and open as either the old version (all
    /// rows, as they were) or the new one (all rows, every one marked by the stage's code).
    @Test(arguments: [false, true])
    func killedMigrationsLeaveTheOldOrTheNewVersion(lightweight: Bool) async throws {
        let (executable, folder) = try Self.executableAndFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let template = folder.appendingPathComponent("Template.sqlite")
        try MigrateCrashVersions.makeStore(at: template, rows: Self.migrationRows)
        let store = folder.appendingPathComponent("Rows.sqlite")
        var outcomes: [MigrateCrashVersions: Int] = [:]
        // Kills spread over the migration: how long it takes is measured by the first round,
        // which is left to finish.
        var duration = Duration.milliseconds(200)
        for round in 0...Self.rounds {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
            try FileManager.default.copyItem(at: template, to: store)
            let started = ContinuousClock.now
            let child = try SaveLoopChild(
                executable: executable, store: store, errorLog: folder.appendingPathComponent("stderr-\(round).txt"),
                arguments: lightweight ? ["--lightweight"] : [], command: "migrate-crash")
            defer { child.killIfRunning() }
            let deadline = ContinuousClock.now + Self.startTimeout
            while !child.lines().contains("migrating"), !child.outputEnded, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            if child.outputEnded && !child.lines().contains("migrating") {
                Issue.record("Round \(round): migrate-crash ended before it migrated: \(try await child.endReport())")
                return
            }
            if round == 0 {
                // The whole migration, on a machine other suites keep busy.
                try await child.waitForExit(timeout: .seconds(300))
                duration = max(ContinuousClock.now - started, .milliseconds(20))
                #expect(child.lines().contains("migrated"), "stderr: \(child.errorOutput())")
            } else {
                if let ran = try await child.killAtRandomMoment(of: duration, startedAt: started), child.lines().contains("migrated") {
                    duration = min(duration, max(ran, .milliseconds(20)))
                }
            }
            let finished = child.lines().contains("migrated")
            let check = try Self.integrityCheck(of: store)
            if check != ["ok"] { Issue.record("Round \(round): integrity_check reports \(check)") }
            let versions = try MigrateCrashVersions.versionsForStore(at: store)
            guard versions.count == 1, let version = versions.first else {
                Issue.record("Round \(round): the store matches versions \(versions)")
                return
            }
            if finished && version != .v2 { Issue.record("Round \(round): the migration reported success, the store is \(version)") }
            outcomes[version, default: 0] += 1
            let container = try PersistentContainer(
                name: "Rows", schema: try version.modelVersion, storeDescriptions: [.sqlite(store)])
            let context = container.newBackgroundContext()
            let count = try context.count(for: FetchRequest<ManagedObject>(entityName: "Row"))
            if count != Self.migrationRows { Issue.record("Round \(round): \(count) rows at \(version)") }
            if version == .v2 {
                let first = try context.fetch(
                    FetchRequest<ManagedObject>(entityName: "Row", predicate: try FetchPredicate(format: "number == 0")))
                #expect(try first.first?.value(forKey: "title") as? String == "row 0")
                if !lightweight {
                    let unmarked = try context.count(
                        for: FetchRequest<ManagedObject>(entityName: "Row", predicate: try FetchPredicate(format: "marked == NO")))
                    if unmarked != 0 { Issue.record("Round \(round): v2 store with \(unmarked) rows the stage did not mark") }
                }
            }
            try container.close()
        }
        #expect(outcomes[.v2, default: 0] >= 1)
    }
}
