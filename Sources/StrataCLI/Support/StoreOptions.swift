import ArgumentParser
import Foundation
import Strata
import StrataPostgres

/// The store a command works on, as the command line names it: an SQLite file, a
/// `postgres://` URL, or a Core Data SQLite file with the model that wrote it.
struct StoreOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "The store: a Strata SQLite file, a postgres:// URL, or a Core Data SQLite file (with --model).",
            valueName: "store"))
    var store: String

    @Option(
        help: ArgumentHelp(
            "The Xcode model (.xcdatamodeld or .xcdatamodel) that wrote a Core Data store; with a Strata store, which of its versions wrote it.",
            valueName: "model"))
    var model: String?

    /// Whether `store` names a PostgreSQL store.
    var isPostgres: Bool { Self.isPostgresURL(store) }

    static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The description of the store `location` names, for commands that hand it to a
    /// migration manager: a PostgreSQL store, or an SQLite file that exists.
    static func description(of location: String) throws -> StoreDescription {
        if isPostgresURL(location) { return try .postgres(url: location) }
        let url = URL(fileURLWithPath: location)
        try OpenedStore.checkFile(url)
        return .sqlite(url)
    }
}

/// A store a command opened: its container (read-only unless the command writes), the schema it
/// records, and what kind of store it is.
final class OpenedStore {
    /// What kind of store was opened.
    enum Kind: String {
        case sqlite = "Strata SQLite store"
        case postgres = "Strata PostgreSQL store"
        case coreData = "Core Data SQLite store (read-only)"
    }

    let kind: Kind
    /// The store as the command line named it (a PostgreSQL URL without its password).
    let location: String
    /// The store's file, for SQLite and Core Data stores.
    let fileURL: URL?
    /// The schema the store records (for a Core Data store: the model version that wrote it).
    let schema: Schema
    /// The container on the store.
    let container: PersistentContainer
    /// The version of `--model` that wrote the store, when a model was named.
    let modelVersionName: String?

    /// The store itself.
    var store: any PersistentStore { container.stores[0] }

    /// The store's identifier: for a Core Data store its own (`Z_UUID`), not the in-memory
    /// copy's the tool reads it through.
    var identifier: String {
        guard kind == .coreData, let fileURL, let uuid = SQLiteStoreProvider(url: fileURL).coreDataStoreUUID else {
            return store.identifier
        }
        return uuid
    }

    private init(
        kind: Kind, location: String, fileURL: URL?, schema: Schema, container: PersistentContainer,
        modelVersionName: String?
    ) {
        self.kind = kind
        self.location = location
        self.fileURL = fileURL
        self.schema = schema
        self.container = container
        self.modelVersionName = modelVersionName
    }

    /// Closes the container.
    func close() {
        try? container.close()
    }

    /// The entity named `name`, or a failure that lists the entities (and suggests the closest).
    func entity(named name: String) throws -> Entity {
        guard let entity = schema.entity(named: name) else {
            let names = schema.entities.map(\.name)
            throw CommandFailure(
                "The store has no entity named '\(name)'."
                    + (didYouMean(name, in: names).isEmpty
                        ? " Its entities: \(names.joined(separator: ", "))." : didYouMean(name, in: names)))
        }
        return entity
    }

    /// Opens the store `options` names.
    ///
    /// - Parameters:
    ///   - forWriting: Whether the command writes (refused for Core Data stores).
    ///   - observingOtherProcesses: Whether commits of other processes should reach the
    ///     container's observers (SQLite stores poll for them; PostgreSQL stores always hear
    ///     them).
    static func open(
        _ options: StoreOptions, forWriting: Bool = false, observingOtherProcesses: Bool = false
    ) throws -> OpenedStore {
        try open(
            location: options.store, model: options.model, forWriting: forWriting,
            observingOtherProcesses: observingOtherProcesses)
    }

    /// Opens the store at `location` (see ``open(_:forWriting:observingOtherProcesses:)``).
    static func open(
        location: String, model: String?, forWriting: Bool = false, observingOtherProcesses: Bool = false
    ) throws -> OpenedStore {
        if StoreOptions.isPostgresURL(location) {
            return try openPostgres(location: location, model: model, forWriting: forWriting)
        }
        let url = URL(fileURLWithPath: location)
        try checkFile(url)
        if let schema = try strataSchema(at: url) {
            var description = StoreDescription.sqlite(
                url, remoteChangePollingInterval: observingOtherProcesses ? .milliseconds(100) : nil,
                isReadOnly: !forWriting)
            description.slowStatementThreshold = nil
            let container = try PersistentContainer(name: "strata", schema: schema, storeDescriptions: [description])
            return OpenedStore(
                kind: .sqlite, location: url.path, fileURL: url, schema: schema, container: container,
                modelVersionName: try model.flatMap { try versionName(ofModelAt: $0, matching: schema) })
        }
        try checkCoreDataTables(try SQLiteStore.tableNames(at: url), at: url)
        guard !forWriting else {
            throw CommandFailure(
                "\(url.path) is a Core Data store, which strata only reads here; convert it with `strata migrate \(url.path) --model Model.xcdatamodeld` (in place) or `strata import-coredata` (into a new file).")
        }
        guard let modelPath = model else {
            throw CommandFailure(
                "\(url.path) is a Core Data store; name the model that wrote it with --model Model.xcdatamodeld.")
        }
        let version = try coreDataVersion(ofModelAt: modelPath, forStoreAt: url)
        let container = try CoreDataImport.openReadOnly(at: url, schema: version.schema, name: "strata")
        return OpenedStore(
            kind: .coreData, location: url.path, fileURL: url, schema: version.schema, container: container,
            modelVersionName: version.name)
    }

    private static func openPostgres(location: String, model: String?, forWriting: Bool) throws -> OpenedStore {
        let configuration = try PostgresConfiguration(url: location)
        let schema = try recordedSchema(of: configuration)
        var description = StoreDescription.postgres(configuration)
        description.isReadOnly = !forWriting
        description.slowStatementThreshold = nil
        let container = try PersistentContainer(name: "strata", schema: schema, storeDescriptions: [description])
        return OpenedStore(
            kind: .postgres, location: configuration.description, fileURL: nil, schema: schema, container: container,
            modelVersionName: try model.flatMap { try versionName(ofModelAt: $0, matching: schema) })
    }

    /// The schema the store at `location` records, read without opening it: for a Core Data
    /// store, the version of `model` whose tables it has.
    static func recordedSchema(of location: String, model: String?) throws -> Schema {
        if StoreOptions.isPostgresURL(location) {
            return try recordedSchema(of: PostgresConfiguration(url: location))
        }
        let url = URL(fileURLWithPath: location)
        try checkFile(url)
        if let schema = try strataSchema(at: url) { return schema }
        try checkCoreDataTables(try SQLiteStore.tableNames(at: url), at: url)
        guard let model else {
            throw CommandFailure(
                "\(url.path) is a Core Data store; name the model that wrote it with --model Model.xcdatamodeld.")
        }
        return try coreDataVersion(ofModelAt: model, forStoreAt: url).schema
    }

    /// The schema a Strata store file records, or `nil` for an SQLite file of another kind
    /// (read once: most files named are Strata stores).
    private static func strataSchema(at url: URL) throws -> Schema? {
        do {
            return try SQLiteStore.recordedSchema(at: url)
        } catch let error as StrataError where error.code == .notAStore {
            // Not SQLite at all: the same error again from the table listing, said once.
            guard (try? SQLiteStore.tableNames(at: url)) != nil else { throw error }
            return nil
        }
    }

    /// The schema the PostgreSQL store in `configuration` records.
    private static func recordedSchema(of configuration: PostgresConfiguration) throws -> Schema {
        guard let schema = try PostgresStore.recordedSchema(configuration: configuration) else {
            throw CommandFailure("There is no Strata store in \(configuration).")
        }
        return schema
    }

    private static func checkCoreDataTables(_ tables: [String], at url: URL) throws {
        guard tables.contains("Z_METADATA") && tables.contains("Z_PRIMARYKEY") else {
            throw CommandFailure(
                "\(url.path) is an SQLite database, but neither a Strata store nor a Core Data store.")
        }
    }

    /// Refuses what is not a regular file, with the reason.
    static func checkFile(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw CommandFailure("There is no file at \(url.path).")
        }
        guard !isDirectory.boolValue else {
            throw CommandFailure("\(url.path) is a directory; name the store file inside it.")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CommandFailure("\(url.path) cannot be read (permission denied).")
        }
        // SQLite takes an empty file for a new database; to a person it is no store at all.
        if let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue, size == 0 {
            throw CommandFailure("\(url.path) is empty; it is not a store.")
        }
    }

    /// The models of a model file: every version of a bundle, or the one model.
    static func loadModel(at path: String) throws -> (versions: [XcodeModel], current: String?) {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CommandFailure("There is no model at \(url.path).")
        }
        if url.pathExtension == "xcdatamodeld" {
            let bundle = try XcodeModelBundle.load(contentsOf: url)
            return (bundle.versions, bundle.currentVersionName)
        }
        return ([try XcodeModel.load(contentsOf: url)], nil)
    }

    /// The name of the version of the model at `path` whose schema is `schema`, or `nil`.
    private static func versionName(ofModelAt path: String, matching schema: Schema) throws -> String? {
        try loadModel(at: path).versions.last { $0.schema.versionHash == schema.versionHash }?.name
    }

    /// The version of the model at `path` whose tables the Core Data store at `url` has.
    private static func coreDataVersion(ofModelAt path: String, forStoreAt url: URL) throws -> XcodeModel {
        let (versions, _) = try loadModel(at: path)
        var fitting: [XcodeModel] = []
        for version in versions {
            do {
                try SQLiteStoreProvider(url: url).checkCoreDataStore(writtenWith: version.schema)
                fitting.append(version)
            } catch let error as StrataError where error.code == .incompatibleSchema {
                continue
            }
        }
        guard let chosen = fitting.last else {
            throw CommandFailure("No version of \(path) has the tables of the Core Data store \(url.path).")
        }
        return chosen
    }
}
