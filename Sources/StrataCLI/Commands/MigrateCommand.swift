import ArgumentParser
import Foundation
import Strata

/// `strata migrate STORE --model Model.xcdatamodeld [--to VERSION] [--dry-run]`: migrates a
/// store through the versions of a model, lightweight.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to a version of its model (lightweight stages).",
        discussion: """
            Detects the version that wrote the store, prints the plan (one lightweight stage per \
            version and the changes each infers) and runs it: atomically, so the store is either \
            migrated or left as it was. Changes that need code (a type change, say) are refused; \
            migrate those from the app with a custom stage.

            A store Core Data wrote is converted into a Strata store in place and migrated, in \
            one atomic step; the Core Data file is removed afterwards unless --keep-core-data.

            A plan that removes an attribute or an entity the store still holds data for is \
            refused unless --force: the plan and --dry-run list what would be lost.

            Examples:
              strata migrate Students.sqlite --model Students.xcdatamodeld --dry-run
              strata migrate Students.sqlite --model Students.xcdatamodeld \\
                  --to "Students 3"
              strata migrate 'postgres://app@db.internal/school' \\
                  --model Students.xcdatamodeld
            """)

    @Argument(help: "The store: an SQLite file or a postgres:// URL.")
    var store: String

    @Option(help: "The versioned Xcode model (.xcdatamodeld).")
    var model: String

    @Option(help: "The version to migrate to (default: the model's current version).")
    var to: String?

    @Flag(help: "Print the plan without migrating.")
    var dryRun = false

    @Flag(help: "Migrate even when the plan removes attributes or entities that hold data.")
    var force = false

    @Flag(help: "Keep a Core Data store's file beside the converted store (as STORE.coredata).")
    var keepCoreData = false

    func run() throws {
        var output = StandardOutput()
        try reportingErrors {
            let bundle = try XcodeModelBundle.load(contentsOf: URL(fileURLWithPath: model))
            try BundleVersion.$bundle.withValue(bundle) {
                let target: BundleVersion
                if let to {
                    guard let index = bundle.versions.firstIndex(where: { $0.name == to }) else {
                        throw StrataError(
                            .migrationFailed,
                            "\(model) has no version \(to); it has \(bundle.versions.map(\.name).joined(separator: ", ")).")
                    }
                    target = BundleVersion(index: index)
                } else {
                    target = .currentVersion
                }
                let manager = StagedMigrationManager<BundleVersion>([])
                var description = try StoreOptions.description(of: store)
                description.keepsConvertedCoreDataStore = keepCoreData
                let plan = try manager.plan(forStore: description, to: target)
                let isCoreData = description.isCoreDataStore
                if isCoreData {
                    print("A Core Data store written with \(plan.source.versionName): converted into a Strata store in place, then migrated.", to: &output)
                }
                print(plan.description, to: &output)
                let losses = try DataLoss.find(in: plan, store: store, model: model)
                if !losses.isEmpty {
                    let lines = losses.map { "  \($0)" }.joined(separator: "\n")
                    guard force || dryRun else {
                        throw CommandFailure(
                            "The plan removes data the store holds:\n\(lines)\nNothing was migrated; migrate with --force to lose it, or keep it with a custom stage.",
                            status: ExitStatus.problemsFound)
                    }
                    OutputChannel.standardError.writeError("Warning: the plan removes data the store holds:\n\(lines)")
                }
                guard !dryRun, !plan.stages.isEmpty || isCoreData else { return }
                try manager.migrateStore(description, to: target) { progress in
                    FileHandle.standardError.write(
                        Data("[\(progress.stage)/\(progress.stageCount)] \(progress.label): \(progress.phase)\n".utf8))
                }
                print("Migrated to \(target.versionName).", to: &output)
            }
        }
    }
}

/// What a migration plan would delete that the store holds: values of removed attributes and
/// objects of removed entities, counted in the store as it is.
enum DataLoss {
    /// One removed attribute or entity with data.
    struct Item: CustomStringConvertible {
        var entity: String
        var attribute: String?
        var objects: Int
        var description: String {
            attribute.map { "\(entity).\($0): \(objects == 1 ? "1 object holds" : "\(objects) objects hold") a value" }
                ?? "\(entity): \(objects) object\(objects == 1 ? "" : "s")"
        }
    }

    /// The removals of `plan` that touch data the store at `store` holds. Only attributes and
    /// entities of the store's own version count (a later stage cannot remove data an earlier
    /// one added, but defaults).
    static func find(in plan: MigrationPlan<BundleVersion>, store: String, model: String) throws -> [Item] {
        let source = try plan.source.modelVersion
        var removed: [(entity: String, attribute: String?)] = []
        for change in plan.changes.flatMap(\.changes) {
            switch change {
            case .entityRemoved(let name) where source.entity(named: name) != nil:
                removed.append((name, nil))
            case .propertyRemoved(let name, let property) where source.entity(named: name)?.attribute(named: property) != nil:
                removed.append((name, property))
            default: continue
            }
        }
        guard !removed.isEmpty else { return [] }
        let opened = try OpenedStore.open(location: store, model: model)
        defer { opened.close() }
        let context = opened.container.newBackgroundContext()
        return try removed.compactMap { entity, attribute in
            var request = FetchRequest<ManagedObject>(entityName: entity)
            if let attribute { request.predicate = try FetchPredicate(format: "%K != nil", attribute) }
            let count = try context.count(for: request)
            return count == 0 ? nil : Item(entity: entity, attribute: attribute, objects: count)
        }
    }
}

/// The versions of an Xcode model bundle, as a ``ModelVersion`` (the bundle is task-local: the
/// command sets it for the work it does).
struct BundleVersion: ModelVersion {
    /// The version's position in the bundle, oldest first.
    let index: Int

    @TaskLocal static var bundle: XcodeModelBundle?

    static var allCases: [BundleVersion] { (0..<(bundle?.versions.count ?? 0)).map(BundleVersion.init) }

    static var currentVersion: BundleVersion {
        BundleVersion(index: bundle.flatMap { bundle in bundle.versions.firstIndex { $0.name == bundle.currentVersionName } } ?? 0)
    }

    var versionName: String { Self.bundle.map { $0.versions[index].name } ?? "\(index)" }

    var modelVersion: Schema {
        get throws {
            guard let bundle = Self.bundle, bundle.versions.indices.contains(index) else {
                throw StrataError(.migrationFailed, "No model bundle is loaded.")
            }
            return bundle.versions[index].schema
        }
    }
}
