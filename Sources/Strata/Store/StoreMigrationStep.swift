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
