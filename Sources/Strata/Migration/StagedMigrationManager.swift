import Foundation

/// Migrates stores through a model's stages: Core Data's `NSStagedMigrationManager`, made by
/// ``ModelVersion/migrationManager()``.
///
/// ```swift
/// let manager = Versions.migrationManager()
/// print(try manager.plan(forStoreAt: url))                 // the stages and inferred changes
/// try manager.migrateStore(at: url) { progress in
///     print("\(progress.stage)/\(progress.stageCount) \(progress.label): \(progress.phase)")
/// }
/// ```
///
/// - A migration is atomic: it completes, or the store is left as it was. Lightweight stages
///   run together in one transaction of the store's, in place (`ALTER TABLE`, so the cost
///   follows the changes, not the store's size). When a stage runs code, every stage works on a
///   copy of the store, which replaces it in one atomic step once all of them succeeded (a
///   rename for an SQLite file, a schema swap for PostgreSQL).
/// - Any store whose ``PersistentStoreProvider`` implements the migration requirements
///   migrates this way: SQLite files (``SQLiteStoreProvider``) and PostgreSQL schemas.
/// - Consecutive versions without a stage migrate lightweight.
/// - A store that Core Data wrote migrates too: it is converted at the version that wrote it
///   (found from its tables) and migrated on a new file, which takes its place in one rename —
///   a process killed at any moment leaves the untouched Core Data store or the complete
///   migrated one. See ``StoreDescription/keepsConvertedCoreDataStore``.
/// - No other container may have the store open while it migrates.
public struct StagedMigrationManager<Version: ModelVersion>: Sendable {
    /// The stages, oldest first.
    public let stages: [MigrationStage<Version>]

    /// A manager for `stages`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let manager = StagedMigrationManager<Versions>([.lightweight(from: .v1, to: .v2, label: "Add ratings")])
    /// ```
    public init(_ stages: [MigrationStage<Version>]) {
        self.stages = stages
    }

    /// What migrating the store at `url` to `target` would do, without doing it.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try Versions.migrationManager().plan(forStoreAt: storeURL)
    /// print(plan)   // "v1 → v3, 2 stages:" and each stage's changes
    /// ```
    ///
    /// - Throws: ``StrataError/Code/migrationFailed`` when the store matches no version or is
    ///   newer than `target`; the errors of reading the store.
    public func plan(forStoreAt url: URL, to target: Version = .currentVersion) throws -> MigrationPlan<Version> {
        try plan(forStore: .sqlite(url), to: target)
    }

    /// What migrating the store `description` names to `target` would do, without doing it.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try Versions.migrationManager().plan(forStore: .sqlite(storeURL), to: .v2)
    /// ```
    public func plan(forStore description: StoreDescription, to target: Version = .currentVersion) throws
        -> MigrationPlan<Version>
    {
        let detected = try Version.versionsForStore(description)
        // Versions with the same schema cannot be told apart: a store matching the target is
        // there already, else it is at the latest matching version before the target.
        let versions = Array(Version.allCases)
        let targetIndex = versions.firstIndex(of: target) ?? versions.count
        if detected.contains(target) { return try plan(from: target, to: target) }
        let before = detected.filter { (versions.firstIndex(of: $0) ?? 0) < targetIndex }
        guard let source = before.max(by: { (versions.firstIndex(of: $0) ?? 0) < (versions.firstIndex(of: $1) ?? 0) }) ?? detected.first else {
            throw StrataError(
                .migrationFailed,
                "The store \(description.provider) was written with a schema that matches none of \(Version.self)'s versions (\(Version.allCases.map(\.versionName).joined(separator: ", "))).")
        }
        return try plan(from: source, to: target)
    }

    /// The stages from `source` to `target`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try Versions.migrationManager().plan(from: .v1, to: .v3)
    /// for (stage, changes) in zip(plan.stages, plan.changes) { print(stage.label, changes) }
    /// ```
    public func plan(from source: Version, to target: Version) throws -> MigrationPlan<Version> {
        let versions = Array(Version.allCases)
        guard let start = versions.firstIndex(of: source), let end = versions.firstIndex(of: target) else {
            throw StrataError(.migrationFailed, "\(source.versionName) or \(target.versionName) is not a case of \(Version.self).")
        }
        guard start <= end else {
            throw StrataError(
                .migrationFailed,
                "The store is at version \(source.versionName), newer than \(target.versionName); Strata does not migrate backwards. Open it with a version of the app that knows \(source.versionName).")
        }
        var path: [MigrationStage<Version>] = []
        var position = start
        while position < end {
            let here = versions[position]
            if let stage = stages.first(where: { $0.source == here }),
                let next = versions.firstIndex(of: stage.destination), next > position, next <= end
            {
                path.append(stage)
                position = next
            } else {
                let next = versions[position + 1]
                path.append(.lightweight(from: here, to: next, label: "Lightweight: \(here.versionName) to \(next.versionName)"))
                position += 1
            }
        }
        var changes: [SchemaDifference] = []
        for stage in path {
            changes.append(try stage.destination.modelVersion.difference(from: stage.source.modelVersion))
        }
        return MigrationPlan(source: source, destination: target, stages: path, changes: changes)
    }

    /// Migrates the store at `url` to `target` through the stages, atomically.
    ///
    /// For example:
    ///
    /// ```swift
    /// try Versions.migrationManager().migrateStore(at: storeURL) { progress in
    ///     print("\(progress.stage)/\(progress.stageCount) \(progress.label): \(progress.phase)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - url: The store file. No other container may have it open.
    ///   - target: The version to migrate to (default: the current one).
    ///   - progress: Called as each stage's phases start and end.
    /// - Returns: The plan that ran (no stages when the store was at `target` already).
    /// - Throws: ``StrataError``: ``StrataError/Code/unsupportedMigration`` for a change no
    ///   lightweight stage can infer, ``StrataError/Code/constraintConflict`` for stored rows
    ///   that break a new uniqueness constraint, ``StrataError/Code/migrationFailed`` when a
    ///   stage's code throws (its error is the underlying error),
    ///   ``StrataError/Code/storeInUse`` while a container (of this process or another) has
    ///   the store open — a migration needs the store to itself. The store is then as it was.
    @discardableResult
    public func migrateStore(
        at url: URL, to target: Version = .currentVersion, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> MigrationPlan<Version> {
        try migrateStore(.sqlite(url), to: target, progress: progress)
    }

    /// Migrates the store `description` names (see ``migrateStore(at:to:progress:)``).
    ///
    /// For example:
    ///
    /// ```swift
    /// // A PostgreSQL database (import StrataPostgres):
    /// let description = try StoreDescription.postgres(url: "postgres://app@db.internal/movies")
    /// try Versions.migrationManager().migrateStore(description, to: .v3)
    /// ```
    @discardableResult
    public func migrateStore(
        _ description: StoreDescription, to target: Version = .currentVersion,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> MigrationPlan<Version> {
        try description.provider.withExclusiveAccess { try migrateExclusively(description, to: target, progress: progress) }
    }

    /// Migrates the store, which nothing else has open.
    private func migrateExclusively(
        _ description: StoreDescription, to target: Version, progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws -> MigrationPlan<Version> {
        let plan = try plan(forStore: description, to: target)
        let steps = try plan.stages.map {
            StoreMigrationStep(source: try $0.source.modelVersion, destination: try $0.destination.modelVersion, label: $0.label)
        }
        if description.isCoreDataStore {
            // A store Core Data wrote: converted at the version that wrote it, then migrated,
            // all on a new file that takes the Core Data store's place in one rename.
            let label = "Convert the Core Data store (\(plan.source.versionName))"
            progress?(MigrationProgress(stage: 0, stageCount: steps.count, label: label, phase: "import"))
            try PersistentContainer.convertCoreDataStoreExclusively(
                description, writtenWith: try plan.source.modelVersion,
                progress: { imported in
                    progress?(
                        MigrationProgress(
                            stage: 0, stageCount: steps.count, label: label, phase: "import", rows: imported.completedUnitCount))
                }
            ) { converted in
                try runStages(plan, steps, on: converted, progress: progress)
            }
            return plan
        }
        guard !plan.stages.isEmpty else { return plan }
        let count = steps.count
        guard plan.stages.contains(where: \.isCustom) else {
            _ = try description.provider.migrateStoreSchema(steps) { number, rows in
                progress?(MigrationProgress(stage: number + 1, stageCount: count, label: steps[number].label, phase: "schema", rows: rows))
            }
            return plan
        }
        let copy = try description.makeMigrationCopy()
        defer { copy.provider.removeMigrationCopy() }
        try runStages(plan, steps, on: copy, progress: progress)
        try description.provider.replaceStore(withMigratedCopy: copy.provider)
        return plan
    }

    /// Runs the stages one by one on `copy`, a store nothing else uses: each stage's code, and
    /// its schema change in a transaction of its own.
    private func runStages(
        _ plan: MigrationPlan<Version>, _ steps: [StoreMigrationStep], on copy: StoreDescription,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws {
        let count = steps.count
        for (number, (stage, step)) in zip(plan.stages, steps).enumerated() {
            func report(_ phase: String, rows: Int = 0) {
                progress?(MigrationProgress(stage: number + 1, stageCount: count, label: stage.label, phase: phase, rows: rows))
            }
            if let pre = stage.preMigration {
                report("pre-migration")
                try run(pre, of: stage, phase: "pre-migration", on: copy, schema: step.source)
            }
            report("schema")
            let rows = try copy.provider.migrateStoreSchema([step]) { _, _ in }
            report("schema", rows: rows)
            if let post = stage.postMigration {
                report("post-migration")
                try run(post, of: stage, phase: "post-migration", on: copy, schema: step.destination)
            }
        }
    }

    /// Runs a stage's code on a context of `schema` over the copy, and saves it.
    private func run(
        _ handler: MigrationStage<Version>.MigrationHandler, of stage: MigrationStage<Version>, phase: String,
        on copy: StoreDescription, schema: Schema
    ) throws {
        let container = try PersistentContainer(name: "Migration", schema: schema, storeDescriptions: [copy])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.name = "migration"
        do {
            try handler(context)
            if context.hasChanges { try context.save() }
        } catch {
            throw StrataError(
                .migrationFailed,
                "The \(phase) code of stage \"\(stage.label)\" failed: \(error). The store was not modified.",
                underlyingError: error)
        }
    }
}

/// The stages a migration runs, with the schema changes each one makes.
public struct MigrationPlan<Version: ModelVersion>: Sendable, CustomStringConvertible {
    /// The store's version.
    public let source: Version
    /// The version it migrates to.
    public let destination: Version
    /// The stages, in order (none when the store is at the destination).
    public let stages: [MigrationStage<Version>]
    /// Each stage's schema changes.
    public let changes: [SchemaDifference]

    /// The plan as text: one line per stage and per change.
    public var description: String {
        guard !stages.isEmpty else { return "The store is at \(destination.versionName); nothing to migrate." }
        var lines = ["\(source.versionName) → \(destination.versionName), \(stages.count) stage\(stages.count == 1 ? "" : "s"):"]
        for (stage, difference) in zip(stages, changes) {
            lines.append("- \(stage.label) (\(stage.isCustom ? "custom" : "lightweight"))")
            lines += difference.changes.map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
