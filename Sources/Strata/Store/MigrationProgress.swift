import Foundation

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
