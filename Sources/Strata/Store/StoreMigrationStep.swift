import Foundation

/// One schema change a store applies to itself during a migration: from the schema it was
/// written with to the next, with the stage's label (recorded in the store's metadata).
///
/// ``StagedMigrationManager`` hands these to the store; a ``PersistentStoreProvider`` that
/// supports migrations applies them in ``PersistentStoreProvider/migrateStoreSchema(_:progress:)``.
public struct StoreMigrationStep: Sendable {
    /// The schema the store has before the step.
    public var source: Schema
    /// The schema it has after.
    public var destination: Schema
    /// The stage's label.
    public var label: String

    /// A step from `source` to `destination`.
    public init(source: Schema, destination: Schema, label: String) {
        self.source = source
        self.destination = destination
        self.label = label
    }
}

/// Where a migration stands, for progress displays.
public struct MigrationProgress: Sendable, Hashable {
    /// The stage running now (1-based).
    public var stage: Int
    /// The number of stages.
    public var stageCount: Int
    /// The stage's label.
    public var label: String
    /// What the stage is doing: `"pre-migration"`, `"schema"` or `"post-migration"`.
    public var phase: String
    /// Rows the schema change wrote so far in this stage (defaults filled, rows of removed
    /// entities deleted, renamed entities relabelled).
    public var rows: Int

    /// Creates a progress report.
    public init(stage: Int, stageCount: Int, label: String, phase: String, rows: Int = 0) {
        self.stage = stage
        self.stageCount = stageCount
        self.label = label
        self.phase = phase
        self.rows = rows
    }
}
