import Foundation
import PostgresNIO
import Strata

/// Staged migrations of PostgreSQL stores, as ``Strata/StagedMigrationManager`` runs them:
///
/// - **Exclusive access.** Every open store holds an advisory lock on its PostgreSQL schema
///   shared (on the connection that listens for commits); a migration takes it exclusively, so
///   it fails with ``Strata/StrataError/Code/storeInUse`` while a container on any server has
///   the store open, and a server that opens the store meanwhile waits for the migration.
/// - **Lightweight steps** run in one PostgreSQL transaction (DDL is transactional): all of
///   them commit together, or — on an error, a refused change or a lost connection — none.
/// - **Custom stages** work on a copy of the store in a schema of its own; the copy takes the
///   store's place by renaming both schemas in one transaction.
extension PostgresStoreProvider {
    /// Takes the schema's presence lock exclusively — every open store holds it shared — waiting up to
    /// ten seconds for containers that are closing, and runs `body` holding it. A container that opens
    /// the store meanwhile, on any server, waits.
    ///
    /// For example:
    ///
    /// ```swift
    /// let provider = PostgresStoreProvider(configuration: configuration)
    /// let recorded = try provider.withExclusiveAccess { try provider.recordedSchema() }   // storeInUse while open
    /// ```
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        let pool = try PostgresStore.migrationPool(configuration)
        defer { pool.close() }
        return try pool.withConnection { session in
            var key = PostgresBindings()
            key.append(integer: PostgresStore.presenceLockKey(forSchemaNamed: configuration.schemaName))
            // A container closed just before may not have let go yet: its connection closes
            // without waiting for the server, and a loaded server can take seconds to end the
            // session (2 s was once too short in a full test run). A container that stays open
            // keeps the lock, and is reported after the wait.
            var locked = false
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                locked = try session.query("SELECT pg_try_advisory_lock($1)", key).rows.first
                    .flatMap { $0.first.flatMap { try? $0.decode(Bool.self) } } == true
                if locked || ContinuousClock.now >= deadline { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            guard locked else {
                throw StrataError(
                    .storeInUse,
                    "The store \(configuration) is open in a container (on this server or another); a migration needs it to itself. Close every container that has it open. The store was not modified.")
            }
            defer { _ = try? session.query("SELECT pg_advisory_unlock($1)", key) }
            return try body()
        }
    }

    /// Runs every step in one PostgreSQL transaction under the schema's write lock (PostgreSQL's DDL
    /// is transactional): all the steps commit, or none.
    ///
    /// For example:
    ///
    /// ```swift
    /// let step = StoreMigrationStep(source: oldSchema, destination: newSchema, label: "Add ratings")
    /// let rows = try provider.withExclusiveAccess {
    ///     try provider.migrateStoreSchema([step]) { number, rows in print("step \(number + 1) done: \(rows) rows") }
    /// }
    /// ```
    public func migrateStoreSchema(_ steps: [StoreMigrationStep], progress: (Int, Int) -> Void) throws -> Int {
        guard let first = steps.first, let last = steps.last else { return 0 }
        let migrations = try steps.map { try SchemaMigration(from: $0.source, to: $0.destination) }
        // Refuses names PostgreSQL would cut before anything is written.
        let layouts = try steps.map { try PostgresLayout(schema: $0.destination) }
        let location = "the schema \(configuration.schemaName) of \(configuration)"
        let pool = try PostgresStore.migrationPool(configuration)
        defer { pool.close() }
        return try pool.withConnection { session in
            try session.transaction {
                try session.lockUntilTransactionEnds(PostgresStore.lockKey(forSchemaNamed: configuration.schemaName))
                let metadata = try PostgresStore.readMetadata(session, location: location)
                guard metadata["format"].map({ String(decoding: $0, as: UTF8.self) }) == PostgresLayout.format else {
                    throw StrataError(
                        .migrationFailed,
                        "The store in \(location) has a storage format this version of Strata cannot migrate. It was not modified.")
                }
                guard metadata["versionHash"] == Data(first.source.versionHash.utf8) else {
                    throw StrataError(
                        .migrationFailed,
                        "The store in \(location) was not written with the schema the migration starts from. It was not modified.")
                }
                var labels = metadata["migrationStages"].flatMap { try? JSONDecoder().decode([String].self, from: $0) } ?? []
                var rows = 0
                for (number, (step, (migration, layout))) in zip(steps, zip(migrations, layouts)).enumerated() {
                    let database = PostgresMigrationDatabase(session: session, newLayout: layout, location: location)
                    do {
                        rows += try migration.apply(database)
                    } catch let error as StrataError where error.code == .storeError || error.code == .storeNotWritable {
                        // The statement (never values) names what the store holds that the
                        // step did not expect.
                        throw StrataError(
                            .migrationFailed,
                            "Stage \"\(step.label)\" failed in PostgreSQL: \(error.message)\(error.sql.map { " (in: \($0))" } ?? ""). The store in \(location) was not modified.",
                            underlyingError: error)
                    }
                    labels.append(step.label)
                    progress(number, rows)
                }
                try PostgresStore.writeMetadata(
                    [
                        ("schema", last.destination.serializedRepresentation()),
                        ("versionHash", Data(last.destination.versionHash.utf8)),
                        ("migrationStages", try JSONEncoder().encode(labels)),
                    ], session: session)
                return rows
            }
        }
    }

    /// Copies the store's tables, metadata, history and key sequences into a new PostgreSQL schema
    /// (`_strata_migrating_…`) of the same database, after dropping the copies of migrations that died
    /// half-way.
    ///
    /// For example:
    ///
    /// ```swift
    /// let copy = try provider.makeMigrationCopy()   // the store itself stays as it is
    /// let step = StoreMigrationStep(source: oldSchema, destination: newSchema, label: "Add ratings")
    /// try copy.migrateStoreSchema([step]) { _, _ in }
    /// ```
    public func makeMigrationCopy() throws -> any PersistentStoreProvider {
        guard let recorded = try recordedSchema() else {
            throw StrataError(.storeNotWritable, "There is no store in the schema \(configuration.schemaName) of \(configuration) to migrate.")
        }
        let pool = try PostgresStore.migrationPool(configuration)
        defer { pool.close() }
        // Copies of migrations that died half-way: no migration of this store runs now (a
        // migration needs the store to itself), so they are abandoned.
        try pool.withConnection { session in
            var prefix = PostgresBindings()
            prefix.append(string: PostgresStore.migrationCopyPrefix(of: configuration.schemaName))
            let abandoned = try session.query("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname, $1)", prefix).rows
                .compactMap { $0.first.flatMap(PostgresValueCoding.string) }
            for schema in abandoned { try session.query("DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE") }
        }
        var copy = configuration
        copy.schemaName =
            PostgresStore.migrationCopyPrefix(of: configuration.schemaName) + UUID().uuidString.prefix(8).lowercased()
        let layout = try PostgresLayout(schema: recorded)
        let copyPool = try PostgresStore.migrationPool(copy)
        defer { copyPool.close() }
        let source = quoted(configuration.schemaName)
        let target = quoted(copy.schemaName)
        do {
            try copyPool.withConnection { session in
                let history = try PostgresStore.readMetadata(session, schema: configuration.schemaName)["history"] != nil
                _ = try PostgresStore.prepare(
                    session, configuration: copy, layout: layout, schema: recorded, isReadOnly: false, history: history,
                    lockKey: PostgresStore.lockKey(forSchemaNamed: copy.schemaName))
                try session.transaction {
                    // Rows, metadata (the store's identifier with it: object IDs stay valid)
                    // and history, column by column by name: the source's columns may be in
                    // another order after earlier migrations.
                    let copied =
                        layout.tables.map(\.name) + [PostgresLayout.metadataTable]
                        + (history ? PostgresStore.historyTables : [])
                    for table in copied {
                        let columns = try PostgresStore.columnNames(of: table, inSchema: copy.schemaName, session: session)
                            .map(quoted).joined(separator: ", ")
                        try session.query("DELETE FROM \(target).\(quoted(table))")
                        try session.query(
                            "INSERT INTO \(target).\(quoted(table)) (\(columns)) OVERRIDING SYSTEM VALUE SELECT \(columns) FROM \(source).\(quoted(table))")
                    }
                    // Sequences go on where the store's stopped: no key is given twice.
                    let sequences = try session.relationNames(ofKinds: ["S"], inSchema: configuration.schemaName)
                    for sequence in sequences {
                        var names = PostgresBindings()
                        names.append(string: copy.schemaName)
                        names.append(string: sequence)
                        try session.query(
                            "SELECT setval(format('%I.%I', $1::text, $2::text)::regclass, last_value, is_called) FROM \(source).\(quoted(sequence))",
                            names)
                    }
                }
            }
        } catch {
            PostgresStoreProvider(configuration: copy).removeMigrationCopy()
            throw error
        }
        return PostgresStoreProvider(configuration: copy)
    }

    /// Renames the store's schema out of the way and the copy's schema into its place, then drops the
    /// old one, all in one transaction.
    ///
    /// For example:
    ///
    /// ```swift
    /// let copy = try provider.makeMigrationCopy()
    /// // … the stages run on the copy …
    /// try provider.replaceStore(withMigratedCopy: copy)   // the store is the copy now, or as it was
    /// ```
    public func replaceStore(withMigratedCopy copy: any PersistentStoreProvider) throws {
        guard let copy = copy as? PostgresStoreProvider else {
            throw StrataError(.migrationFailed, "\(copy) is not a PostgreSQL copy of \(configuration); the store was not modified.")
        }
        let pool = try PostgresStore.migrationPool(configuration)
        defer { pool.close() }
        let replaced = PostgresStore.migrationCopyPrefix(of: configuration.schemaName) + "old"
        try pool.withConnection { session in
            try session.transaction {
                try session.lockUntilTransactionEnds(PostgresStore.lockKey(forSchemaNamed: configuration.schemaName))
                try session.query("DROP SCHEMA IF EXISTS \(quoted(replaced)) CASCADE")
                try session.query("ALTER SCHEMA \(quoted(configuration.schemaName)) RENAME TO \(quoted(replaced))")
                try session.query("ALTER SCHEMA \(quoted(copy.configuration.schemaName)) RENAME TO \(quoted(configuration.schemaName))")
                try session.query("DROP SCHEMA \(quoted(replaced)) CASCADE")
            }
        }
    }

    /// Drops the copy's PostgreSQL schema when this provider names a migration copy; does nothing for
    /// any other schema, and ignores errors.
    ///
    /// For example:
    ///
    /// ```swift
    /// let copy = try provider.makeMigrationCopy()
    /// defer { copy.removeMigrationCopy() }   // drops the copy if a stage fails; after the swap, there is none
    /// // … the stages run on the copy …
    /// try provider.replaceStore(withMigratedCopy: copy)
    /// ```
    public func removeMigrationCopy() {
        guard configuration.schemaName.hasPrefix("_strata_migrating_"), let pool = try? PostgresStore.migrationPool(configuration)
        else { return }
        defer { pool.close() }
        _ = try? pool.withConnection { session in
            try session.query("DROP SCHEMA IF EXISTS \(quoted(configuration.schemaName)) CASCADE")
        }
    }
}

extension PostgresStore {
    /// The history tables, in the order they are copied.
    static var historyTables: [String] {
        [StoreLayout.historyTransactionTable, StoreLayout.historyChangeTable, StoreLayout.historyTombstoneTable, StoreLayout.historyReaderTable, historyCounterTable]
    }

    /// The start of the names of a schema's migration copies: short and fixed-length, so that
    /// no name is cut at PostgreSQL's 63 bytes.
    static func migrationCopyPrefix(of schemaName: String) -> String {
        "_strata_migrating_" + String(UInt64(bitPattern: lockKey(forSchemaNamed: schemaName)) % 0xFFFF_FFFF, radix: 16) + "_"
    }

    /// A pool of one connection to `configuration`'s schema, for a migration's steps.
    static func migrationPool(_ configuration: PostgresConfiguration) throws -> PostgresConnectionPool {
        var configuration = configuration
        configuration.pool.maximumConnections = 1
        return try PostgresConnectionPool(
            configuration: configuration,
            instrumentation: .silent(kind: "postgres", name: configuration.schemaName),
            sessionSetup: ["SET search_path TO \(quoted(configuration.schemaName))"])
    }

    /// The store's metadata, by key; the schema is the session's unless `schema` names one.
    static func readMetadata(_ session: PostgresSession, schema: String? = nil, location: String? = nil) throws -> [String: Data] {
        let table = (schema.map { quoted($0) + "." } ?? "") + quoted(PostgresLayout.metadataTable)
        var metadata: [String: Data] = [:]
        let rows: [PostgresRow]
        do {
            rows = Array(try session.query("SELECT key, value FROM \(table)").rows)
        } catch let error as StrataError where error.code == .storeError {
            throw StrataError(.notAStore, "There is no Strata store in \(location ?? schema ?? "the schema") to migrate.", underlyingError: error)
        }
        for row in rows {
            let cells = Array(row)
            guard cells.count == 2, let key = PostgresValueCoding.string(cells[0]), let value = PostgresValueCoding.data(cells[1])
            else { continue }
            metadata[key] = value
        }
        return metadata
    }

    /// Writes metadata entries, replacing those with the same keys.
    static func writeMetadata(_ entries: [(String, Data)], session: PostgresSession) throws {
        for (key, value) in entries {
            var bindings = PostgresBindings()
            bindings.append(string: key)
            bindings.append(value: .data(value))
            try session.query(
                "INSERT INTO \(quoted(PostgresLayout.metadataTable)) (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                bindings)
        }
    }

    /// The columns of a table, in order.
    static func columnNames(of table: String, inSchema schema: String, session: PostgresSession) throws -> [String] {
        var bindings = PostgresBindings()
        bindings.append(string: schema)
        bindings.append(string: table)
        return try session.query(
            """
            SELECT a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
            """, bindings
        ).rows.compactMap { $0.first.flatMap(PostgresValueCoding.string) }
    }
}

/// A PostgreSQL store's schema inside a migration's transaction, as ``Strata/SchemaMigration``
/// uses it.
struct PostgresMigrationDatabase: SchemaMigrationDatabase {
    let session: PostgresSession
    /// The layout the step migrates to: the types of added columns and tables.
    let newLayout: PostgresLayout
    let location: String

    var storeLocation: String { " in \(location)" }
    var fileURL: URL? { nil }

    func placeholder(_ number: Int) -> String { "$\(number)" }

    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        var bindings = PostgresBindings()
        for argument in arguments { bindings.append(value: argument) }
        return try session.query(sql, bindings).metadata.rows ?? 0
    }

    func integers(_ sql: String) throws -> [Int64] {
        try session.query(sql).rows.compactMap { $0.first.flatMap(PostgresValueCoding.integer) }
    }

    func texts(_ sql: String) throws -> [String] {
        try session.query(sql).rows.compactMap { $0.first.flatMap(PostgresValueCoding.string) }
    }

    func storedIndexes(onTables tables: Set<String>) throws -> [StoredIndex] {
        // The statement that made each index is its comment (PostgreSQL's own definition is
        // normalized, so it cannot be compared); indexes that back a constraint are the table's.
        try session.query(
            """
            SELECT i.relname::text, t.relname::text, obj_description(i.oid, 'pg_class')::text
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
            """
        ).rows.compactMap { row in
            let cells = Array(row)
            guard cells.count == 3, let name = PostgresValueCoding.string(cells[0]), let table = PostgresValueCoding.string(cells[1]),
                tables.contains(table)
            else { return nil }
            return StoredIndex(name: name, table: table, sql: PostgresValueCoding.string(cells[2]))
        }
    }

    func createIndex(_ index: StoreLayout.Index) throws -> Bool {
        // A failed statement aborts a PostgreSQL transaction: the savepoint keeps it usable.
        try session.query("SAVEPOINT strata_index")
        do {
            try session.query(index.sql)
        } catch let error as StrataError where error.code == .constraintConflict {
            try session.query("ROLLBACK TO SAVEPOINT strata_index")
            return false
        }
        try session.query("RELEASE SAVEPOINT strata_index")
        try session.query(PostgresLayout.recordingStatement(of: index))
        return true
    }

    func createTable(_ table: StoreLayout.Table) throws {
        for statement in newLayout.creationStatements(ofTable: table.name) { try session.query(statement) }
    }

    func renameTable(_ name: String, to newName: String) throws {
        try session.query("ALTER TABLE \(quoted(name)) RENAME TO \(quoted(newName))")
        try session.query(
            "ALTER SEQUENCE IF EXISTS \(quoted(PostgresLayout.keySequence(of: name))) RENAME TO \(quoted(PostgresLayout.keySequence(of: newName)))")
    }

    func dropTable(_ name: String) throws {
        try session.query("DROP TABLE IF EXISTS \(quoted(name))")
        try session.query("DROP SEQUENCE IF EXISTS \(quoted(PostgresLayout.keySequence(of: name)))")
    }

    func addColumn(_ column: String, to table: String) throws {
        let type = newLayout.tables.first { $0.name == table }?.columns.first { $0.name == column }?.type ?? "bigint"
        try session.query("ALTER TABLE \(quoted(table)) ADD COLUMN \(quoted(column)) \(type)")
    }

    func continueKeys(of table: String, from oldTable: String) throws {
        let sequence = quoted(PostgresLayout.keySequence(of: table))
        let oldSequence = quoted(PostgresLayout.keySequence(of: oldTable))
        try session.query(
            """
            SELECT setval('\(sequence)', GREATEST(h, 1), h > 0) FROM (SELECT GREATEST(
            COALESCE((SELECT last_value FROM \(oldSequence) WHERE is_called), 0),
            COALESCE((SELECT MAX(\(quoted(StoreLayout.primaryKeyColumn))) FROM \(quoted(oldTable))), 0)) AS h) highest
            """)
    }

    func createLinkTable(_ name: String) throws -> String {
        try session.query("CREATE TEMP TABLE \(quoted(name)) (a bigint NOT NULL, b bigint NOT NULL) ON COMMIT DROP")
        return "pg_temp.\(quoted(name))"
    }

    func commaSeparated(_ expression: String) -> String { "string_agg((\(expression))::text, ',' ORDER BY \(expression))" }
}
