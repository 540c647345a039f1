import ArgumentParser
import Foundation
import Strata
import StrataPostgres

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `strata create STORE --model MODEL`: a new, empty store with a model's schema.
struct CreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an empty store with the schema of a model.",
        discussion: """
            Writes a new store with no objects: an SQLite file, or a store in a PostgreSQL schema \
            named by a postgres:// URL, with the tables, indexes and recorded schema of a model. \
            The model is an Xcode model bundle (.xcdatamodeld; --version chooses a version, by \
            default the bundle's current one), one Xcode model (.xcdatamodel), or a schema as \
            `strata schema --json` writes it. Apps open the store with the same model; `strata \
            import` fills it.

            An existing store is never overwritten: the command fails when the file exists or \
            when the PostgreSQL schema holds a store (or any other tables). A new SQLite file \
            appears only once complete.

            Examples:
              strata create Empty.sqlite --model Movies.xcdatamodeld
              strata create Empty.sqlite --model Movies.xcdatamodeld --version "Movies 2"
              strata schema Movies.sqlite --json > schema.json &&
                  strata create Copy.sqlite --model schema.json
              strata create 'postgres://app@db.internal/catalog?schema=staging' \\
                  --model Movies.xcdatamodeld
            """)

    @Argument(help: ArgumentHelp("The store to create: an SQLite file or a postgres:// URL.", valueName: "store"))
    var store: String

    @Option(
        help: ArgumentHelp(
            "The model: an Xcode model bundle (.xcdatamodeld), an Xcode model (.xcdatamodel), or a schema JSON file (as `strata schema --json` writes).",
            valueName: "model"))
    var model: String

    @Option(help: ArgumentHelp("The version of a model bundle to use (default: its current version).", valueName: "name"))
    var version: String?

    func run() throws {
        try reportingErrors {
            let (schema, modelName) = try Self.schema(ofModelAt: model, version: version)
            for warning in schema.warnings { OutputChannel.standardError.writeMessage("warning: \(warning)") }
            let location: String
            if StoreOptions.isPostgresURL(store) {
                location = try Self.createPostgresStore(store, schema: schema)
            } else {
                location = try Self.createSQLiteStore(at: URL(fileURLWithPath: store), schema: schema)
            }
            let entities = schema.entities.count
            OutputChannel.standardError.writeMessage(
                "Created an empty store at \(location) with \(entities) entit\(entities == 1 ? "y" : "ies") from \(modelName).")
        }
    }

    /// The schema of the model at `path` and how messages name it: a version of a bundle (the
    /// current one unless `version` names another), an Xcode model, or a schema JSON file.
    static func schema(ofModelAt path: String, version: String?) throws -> (Schema, String) {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw CommandFailure("There is no model at \(url.path).")
        }
        if url.pathExtension == "xcdatamodeld" {
            let bundle = try XcodeModelBundle.load(contentsOf: url)
            guard let version else {
                return (bundle.currentVersion.schema, "\(path) (version \(bundle.currentVersion.name))")
            }
            guard let chosen = bundle.version(named: version) else {
                throw CommandFailure(
                    "\(path) has no version \(version); it has \(bundle.versions.map(\.name).joined(separator: ", ")).")
            }
            return (chosen.schema, "\(path) (version \(chosen.name))")
        }
        guard version == nil else {
            throw CommandFailure(
                "--version chooses a version of a model bundle (.xcdatamodeld); \(path) holds one model.")
        }
        if url.pathExtension == "xcdatamodel" || url.lastPathComponent == "contents" {
            return (try XcodeModel.load(contentsOf: url).schema, path)
        }
        guard !isDirectory.boolValue else {
            throw CommandFailure(
                "\(url.path) is a folder, but not an Xcode model; name an .xcdatamodeld bundle, an .xcdatamodel, or a schema JSON file.")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CommandFailure("Cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            return (try Schema(serializedRepresentation: data), path)
        } catch let error as StrataError where error.code == .corruptSchema {
            throw CommandFailure(
                "\(path) is neither an Xcode model (.xcdatamodeld, .xcdatamodel) nor a schema as `strata schema --json` writes it: \(error.message)")
        }
    }

    /// Writes an empty store of `schema` to a new file at `url`, built beside it and put in
    /// place only when complete; returns the file's path.
    static func createSQLiteStore(at url: URL, schema: Schema) throws -> String {
        let exists = "\(url.path) exists; strata create never overwrites a store. Choose another path, or remove the file first."
        // lstat, not `fileExists`: a symbolic link to nothing takes the name too.
        var status = stat()
        guard lstat(url.path, &status) != 0 else { throw CommandFailure(exists) }
        let folder = url.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure("There is no folder \(folder.path) to create the store in.")
        }
        let building = folder.appendingPathComponent(".\(url.lastPathComponent)-\(UUID().uuidString).strata-creating")
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: building.path + suffix) }
        }
        var description = StoreDescription.sqlite(building)
        description.slowStatementThreshold = nil
        let container = try PersistentContainer(name: "strata", schema: schema, storeDescriptions: [description])
        try container.close()
        // A journal or WAL left by a deleted store of that name would be replayed into the new one.
        for suffix in ["-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        // A hard link fails when the name is taken meanwhile, where a rename would replace it.
        guard link(building.path, url.path) == 0 else {
            let code = errno
            if code == EEXIST { throw CommandFailure(exists) }
            throw CommandFailure("Cannot create \(url.path): \(String(cString: strerror(code))).")
        }
        return url.path
    }

    /// Creates an empty store of `schema` in the PostgreSQL schema `location` names, which must
    /// hold no tables yet; returns the store's description (without its password).
    static func createPostgresStore(_ location: String, schema: Schema) throws -> String {
        let configuration = try PostgresConfiguration(url: location)
        if try PostgresStore.recordedSchema(configuration: configuration) != nil {
            throw CommandFailure(
                "There is a store in \(configuration) already; strata create never overwrites a store. Name another schema (?schema=NAME) or database.")
        }
        var description = StoreDescription.postgres(configuration)
        description.slowStatementThreshold = nil
        let container = try PersistentContainer(name: "strata", schema: schema, storeDescriptions: [description])
        try container.close()
        return configuration.description
    }
}
