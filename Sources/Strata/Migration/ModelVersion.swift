import Foundation

/// The versions of a model, oldest first: one case per version, each with its schema, and the
/// stages that migrate a store from one to the next. The data-stack kit's `ModelVersion`.
///
/// ```swift
/// enum Versions: String, ModelVersion {
///     case v1 = "Model"
///     case v2 = "Model2"
///     case v3 = "Model3"
///
///     var modelVersion: Schema {
///         get throws {
///             switch self {
///             case .v1: try Schema([V1.Student.self])          // @Entity classes, one enum per version
///             case .v2: try Schema([V2.Student.self])
///             case .v3: try XcodeModelBundle.load(contentsOf: bundleURL).version(named: rawValue)!.schema
///             }
///         }
///     }
///
///     static func migrationStages() -> [MigrationStage<Versions>] {
///         [
///             v1.migrationStage(toVersion: .v2, label: "Lightweight Migration: V1 to V2"),
///             v2.migrationStage(toVersion: .v3, label: "Custom Migration: V2 to V3",
///                 preMigration: { context in /* on the v2 schema */ },
///                 postMigration: { context in /* on the v3 schema */ }),
///         ]
///     }
/// }
///
/// try Versions.migrationManager().migrateStore(at: url)   // to Versions.currentVersion
/// ```
public protocol ModelVersion: CaseIterable, Hashable, Sendable where AllCases: Sendable {
    /// The version the app writes (default: the last case).
    static var currentVersion: Self { get }

    /// The version's name (default: the raw value of a `String` enum, else the case's name).
    var versionName: String { get }

    /// The version's schema (the kit's `modelVersion`, a managed object model there).
    var modelVersion: Schema { get throws }

    /// The stages from each version to the next, oldest first. Consecutive versions without a
    /// stage of their own migrate lightweight (the default: no stages at all).
    ///
    /// For example:
    ///
    /// ```swift
    /// // In the enum of versions: v1 to v2 is inferred, v2 to v3 runs code.
    /// static func migrationStages() -> [MigrationStage<Self>] {
    ///     [
    ///         v1.migrationStage(toVersion: .v2, label: "Add ratings"),
    ///         v2.migrationStage(toVersion: .v3, label: "Rate unrated movies", postMigration: { context in
    ///             for movie in try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie")) {
    ///                 try movie.setValue(3.0, forKey: "rating")
    ///             }
    ///         }),
    ///     ]
    /// }
    /// ```
    static func migrationStages() -> [MigrationStage<Self>]
}

extension ModelVersion {
    /// The last case.
    public static var currentVersion: Self {
        guard let last = Array(allCases).last else {
            preconditionFailure("\(Self.self) has no cases; a ModelVersion needs one per model version.")
        }
        return last
    }

    /// The case's name.
    public var versionName: String { "\(self)" }

    /// None: every version migrates to the next lightweight.
    ///
    /// For example:
    ///
    /// ```swift
    /// enum Versions: String, ModelVersion {
    ///     case v1 = "Movies", v2 = "Movies 2"
    ///
    ///     var modelVersion: Schema {
    ///         get throws { try XcodeModelBundle.named("Movies").version(named: rawValue)!.schema }
    ///     }
    /// }
    /// let plan = try Versions.migrationManager().plan(from: .v1, to: .v2)   // one lightweight stage
    /// ```
    public static func migrationStages() -> [MigrationStage<Self>] { [] }

    /// A stage from this version to `toVersion`: lightweight without handlers, custom with
    /// them (the kit's `migrationStage(toVersion:label:preMigration:postMigration:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let stage = Versions.v2.migrationStage(
    ///     toVersion: .v3, label: "Drop reviews without a movie",
    ///     preMigration: { context in
    ///         let orphans = FetchRequest<ManagedObject>(entityName: "Review", predicate: try FetchPredicate(format: "movie == nil"))
    ///         for review in try context.fetch(orphans) { context.delete(review) }
    ///     })
    /// ```
    ///
    /// - Parameters:
    ///   - toVersion: The version the stage ends at (the next one).
    ///   - label: A description, recorded in the store and shown in progress reports.
    ///   - preMigration: Work on a context of this version's schema before the schema changes;
    ///     the migrator saves it.
    ///   - postMigration: Work on a context of `toVersion`'s schema afterwards; saved too.
    public func migrationStage(
        toVersion: Self, label: String, preMigration: MigrationStage<Self>.MigrationHandler? = nil,
        postMigration: MigrationStage<Self>.MigrationHandler? = nil
    ) -> MigrationStage<Self> {
        MigrationStage(
            source: self, destination: toVersion, label: label, preMigration: preMigration, postMigration: postMigration)
    }

    /// The manager that migrates stores through ``migrationStages()``.
    ///
    /// For example:
    ///
    /// ```swift
    /// try Versions.migrationManager().migrateStore(at: storeURL)
    /// ```
    public static func migrationManager() -> StagedMigrationManager<Self> {
        StagedMigrationManager(migrationStages())
    }

    /// The versions whose schema wrote the store at `url` (zero or one, unless two versions
    /// share a schema). Reads the store's metadata without opening it for writing.
    ///
    /// For a store Core Data wrote, the versions whose table layout fits it: usually one;
    /// several when they differ only in what the tables do not show (optionality, defaults,
    /// validation rules) — ``ambiguity(among:)`` says what. Nothing is written either way.
    ///
    /// For example:
    ///
    /// ```swift
    /// switch try Versions.versionsForStore(at: url).first {
    /// case Versions.currentVersion?: break                     // up to date
    /// case let old?: try Versions.migrationManager().migrateStore(at: url)   // from `old`
    /// case nil: print("written by an unknown version")
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` when there is no readable store at `url`, or a version's
    ///   schema cannot be made.
    public static func versionsForStore(at url: URL) throws -> [Self] {
        try versionsForStore(.sqlite(url))
    }

    /// The versions whose schema wrote the store `description` names (see
    /// ``versionsForStore(at:)``).
    ///
    /// For example:
    ///
    /// ```swift
    /// // A PostgreSQL database (import StrataPostgres):
    /// let description = try StoreDescription.postgres(url: "postgres://app@db.internal/movies")
    /// let versions = try Versions.versionsForStore(description)
    /// ```
    public static func versionsForStore(_ description: StoreDescription) throws -> [Self] {
        let recorded: Schema?
        do {
            recorded = try description.recordedSchema()
        } catch let error as StrataError where error.code == .notAStore && description.isCoreDataStore {
            return try coreDataVersions(of: description)
        }
        guard let recorded else {
            throw StrataError(.storeNotWritable, "There is no store to detect the version of: \(description.provider).")
        }
        return try allCases.filter { try $0.modelVersion.versionHash == recorded.versionHash }
    }

    /// The versions whose table layout fits the Core Data store `description` names (Core
    /// Data records no schema Strata can compare; its tables show entities, properties and
    /// relationships).
    private static func coreDataVersions(of description: StoreDescription) throws -> [Self] {
        guard let source = description.coreDataProvider else { return [] }
        return try allCases.filter { version in
            do {
                try source.checkCoreDataStore(writtenWith: try version.modelVersion)
                return true
            } catch let error as StrataError where error.code == .incompatibleSchema {
                return false
            }
        }
    }

    /// Why a Core Data store fits several of the versions: what tells those versions apart,
    /// which its tables do not show. `nil` when `versions` are fewer than two.
    ///
    /// For example:
    ///
    /// ```swift
    /// let versions = try Versions.versionsForStore(at: coreDataURL)
    /// if let reason = try Versions.ambiguity(among: versions) { print(reason) }
    /// // "v2, v3 all fit the store's tables; they differ only in what Core Data's tables do not show
    /// // (v2 → v3: …). A migration starts from the newest of them."
    /// ```
    public static func ambiguity(among versions: [Self]) throws -> String? {
        guard versions.count > 1, let first = versions.first else { return nil }
        var differences: [String] = []
        for version in versions.dropFirst() {
            let changes = try version.modelVersion.difference(from: try first.modelVersion).changes.map { "\($0)" }
            differences.append(
                "\(first.versionName) → \(version.versionName): " + (changes.isEmpty ? "no difference" : changes.joined(separator: "; ")))
        }
        return "\(versions.map(\.versionName).joined(separator: ", ")) all fit the store's tables; they differ only in what Core Data's tables do not show (\(differences.joined(separator: " | "))). A migration starts from the newest of them."
    }

    /// The versions whose schema is the one `container` was opened with.
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try PersistentContainer(name: "Movies", schema: try Versions.v2.modelVersion)
    /// let versions = try Versions.versions(compatibleWith: container)   // [.v2]
    /// ```
    public static func versions(compatibleWith container: PersistentContainer) throws -> [Self] {
        try allCases.filter { try $0.modelVersion.versionHash == container.schema.versionHash }
    }
}

extension ModelVersion where Self: RawRepresentable, RawValue == String {
    /// The raw value.
    public var versionName: String { rawValue }
}

/// One step of a staged migration, from one model version to the next: lightweight (the
/// schema change is inferred) or custom (code runs before and after it).
public struct MigrationStage<Version: ModelVersion>: Sendable {
    /// Work on a context during a custom stage; the migrator saves the context afterwards.
    public typealias MigrationHandler = @Sendable (ObjectContext) throws -> Void

    /// The version the stage starts at.
    public let source: Version
    /// The version it ends at.
    public let destination: Version
    /// Its description.
    public let label: String
    /// Work on the source schema before the schema changes.
    public let preMigration: MigrationHandler?
    /// Work on the destination schema after it changed.
    public let postMigration: MigrationHandler?

    /// Whether the stage runs code (`false` for a lightweight stage).
    public var isCustom: Bool { preMigration != nil || postMigration != nil }

    /// Creates a stage; see ``ModelVersion/migrationStage(toVersion:label:preMigration:postMigration:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stage = MigrationStage<Versions>(source: .v1, destination: .v2, label: "Add ratings")
    /// ```
    public init(
        source: Version, destination: Version, label: String, preMigration: MigrationHandler? = nil,
        postMigration: MigrationHandler? = nil
    ) {
        self.source = source
        self.destination = destination
        self.label = label
        self.preMigration = preMigration
        self.postMigration = postMigration
    }

    /// A lightweight stage: the schema change is inferred.
    ///
    /// For example:
    ///
    /// ```swift
    /// static func migrationStages() -> [MigrationStage<Self>] {
    ///     [.lightweight(from: .v1, to: .v2, label: "Add ratings")]
    /// }
    /// ```
    public static func lightweight(from source: Version, to destination: Version, label: String) -> Self {
        Self(source: source, destination: destination, label: label)
    }

    /// A custom stage with code before and after the schema change.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stage = MigrationStage<Versions>.custom(
    ///     from: .v2, to: .v3, label: "Rate unrated movies",
    ///     postMigration: { context in
    ///         let unrated = FetchRequest<ManagedObject>(entityName: "Movie", predicate: try FetchPredicate(format: "rating == 0"))
    ///         for movie in try context.fetch(unrated) { try movie.setValue(3.0, forKey: "rating") }
    ///     })
    /// ```
    public static func custom(
        from source: Version, to destination: Version, label: String, preMigration: MigrationHandler? = nil,
        postMigration: MigrationHandler? = nil
    ) -> Self {
        Self(source: source, destination: destination, label: label, preMigration: preMigration, postMigration: postMigration)
    }
}
