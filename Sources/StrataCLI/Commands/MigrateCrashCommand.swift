import ArgumentParser
import Foundation
import Strata

/// `strata migrate-crash`: migrates a store of ``MigrateCrashVersions/v1`` to
/// ``MigrateCrashVersions/v2``. A hidden command that the crash-safety tests kill at random
/// moments during the migration.
///
/// It writes `migrating` on its own line before the migration starts and `migrated` when it
/// finished. The v1 → v2 stage renames `label` to `title`, adds `note`, and — unless
/// `--lightweight` — marks every row in post-migration code, so that it takes a while.
struct MigrateCrashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-crash",
        abstract: "Migrate a crash-test store from v1 to v2, saying when it starts and ends.",
        shouldDisplay: false)

    @Option(name: .customLong("store"), help: "The SQLite store to migrate.")
    var storePath: String

    @Flag(help: "Migrate without the custom stage's code.")
    var lightweight = false

    func run() throws {
        var output = StandardOutput()
        print("migrating", to: &output)
        let manager =
            lightweight
            ? StagedMigrationManager<MigrateCrashVersions>([]) : MigrateCrashVersions.migrationManager()
        try manager.migrateStore(at: URL(fileURLWithPath: storePath))
        print("migrated", to: &output)
    }
}

/// The two versions of the crash test's model: rows with a number and a label, then with the
/// label renamed to `title`, a new `note`, and — from the custom stage — `marked` set.
enum MigrateCrashVersions: String, ModelVersion {
    case v1, v2

    var modelVersion: Schema {
        get throws {
            var attributes = [AttributeDescription(name: "number", type: .integer64, isIndexed: true)]
            if self == .v1 {
                attributes.append(AttributeDescription(name: "label", type: .string, defaultValue: .string("")))
            } else {
                attributes += [
                    AttributeDescription(name: "title", type: .string, defaultValue: .string(""), renamingIdentifier: "label"),
                    AttributeDescription(name: "note", type: .string, isOptional: true),
                    AttributeDescription(name: "marked", type: .boolean, defaultValue: .boolean(false)),
                ]
            }
            return try Schema([EntityDescription(name: "Row", attributes: attributes)])
        }
    }

    static func migrationStages() -> [MigrationStage<Self>] {
        [
            v1.migrationStage(
                toVersion: .v2, label: "Mark every row",
                postMigration: { context in
                    for row in try context.fetch(FetchRequest<ManagedObject>(entityName: "Row")) {
                        try row.setValue(true, forKey: "marked")
                    }
                })
        ]
    }

    /// Writes a v1 store of `count` rows at `url`.
    static func makeStore(at url: URL, rows count: Int) throws {
        let schema = try v1.modelVersion
        let container = try PersistentContainer(name: "Rows", schema: schema, storeDescriptions: [.sqlite(url)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        guard let entity = schema.entity(named: "Row") else { return }
        for number in 0..<count {
            let row = ManagedObject(entity: entity)
            context.insert(row)
            try row.setValue(Int64(number), forKey: "number")
            try row.setValue("row \(number)", forKey: "label")
        }
        try context.save()
    }
}
