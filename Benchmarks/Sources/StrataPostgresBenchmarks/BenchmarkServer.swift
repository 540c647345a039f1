import BenchmarkSupport
import Foundation
import Logging
import PostgresNIO
import StrataPostgres

/// The PostgreSQL server every contender uses, and a connection of the benchmark's own for the
/// untimed steps: creating and emptying tables, building the data the fetches read, and reading
/// back what the inserts wrote.
final class BenchmarkServer {
    /// The server as Strata's URL parser reads it (`STRATA_POSTGRES_URL` or `--url`), without
    /// TLS: loopback, and the same for every contender.
    let configuration: PostgresConfiguration
    /// The same server for postgres-nio, and through it for Fluent.
    let connectionConfiguration: PostgresConnection.Configuration
    let logger: Logger
    private let admin: PostgresConnection

    init(url: String) throws {
        var configuration = try PostgresConfiguration(url: url)
        configuration.tlsMode = .disable
        self.configuration = configuration
        connectionConfiguration = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        var logger = Logger(label: "strata.benchmarks")
        logger.logLevel = .error
        self.logger = logger
        let (connectionConfiguration, driverLogger) = (connectionConfiguration, logger)
        admin = try waitFor {
            try await PostgresConnection.connect(configuration: connectionConfiguration, id: 0, logger: driverLogger)
        }
    }

    /// Strata's configuration for the store in `schema`.
    func strataConfiguration(schema: String) -> PostgresConfiguration {
        var configuration = configuration
        configuration.schemaName = schema
        return configuration
    }

    /// Runs statements that return nothing, in order.
    func execute(_ statements: String...) throws {
        try execute(statements)
    }

    func execute(_ statements: [String]) throws {
        let (admin, logger) = (admin, logger)
        try waitFor {
            for sql in statements { try await admin.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
        }
    }

    /// The integers of the first row a query returns (the untimed checks).
    func integers(_ sql: String) throws -> [Int64] {
        let (admin, logger) = (admin, logger)
        return try waitFor {
            for try await row in try await admin.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                return try row.makeRandomAccess().map { try $0.decode(Int64.self) }
            }
            throw BenchmarkError("\(sql) returned no row")
        }
    }

    /// `SHOW server_version`.
    func version() throws -> String {
        let (admin, logger) = (admin, logger)
        return try waitFor {
            for try await (version) in try await admin.query("SHOW server_version", logger: logger).decode(String.self) {
                return version
            }
            return "unknown"
        }
    }

    private var builtTables: Set<String> = []

    /// Builds `bench_sql.ints` with `count` rows, once: what raw postgres-nio and Fluent read in W2.
    func prepareSQLInts(count: Int) throws {
        guard builtTables.insert("ints").inserted else { return }
        try execute("CREATE SCHEMA IF NOT EXISTS \(Schemas.sql)")
        try execute(SQLTables.createInts(in: Schemas.sql), SQLTables.fillInts(in: Schemas.sql, count: count))
        try execute("VACUUM ANALYZE \(Schemas.sql).ints")
    }

    /// Builds `bench_sql.item` with `count` items, once: what raw postgres-nio and Fluent read in
    /// W4 and W5.
    func prepareSQLItems(count: Int) throws {
        guard builtTables.insert("item").inserted else { return }
        try execute("CREATE SCHEMA IF NOT EXISTS \(Schemas.sql)")
        try execute(SQLTables.createItems(in: Schemas.sql) + [SQLTables.fillItems(in: Schemas.sql, count: count)])
        try execute("VACUUM ANALYZE \(Schemas.sql).item")
    }

    /// Creates (once) and empties `bench_sql_w1.ints`, where raw postgres-nio and Fluent insert.
    func prepareSQLInsertTable() throws {
        if builtTables.insert("w1").inserted {
            try execute("CREATE SCHEMA IF NOT EXISTS \(Schemas.sqlInsert)", SQLTables.createInts(in: Schemas.sqlInsert))
        }
        try execute("TRUNCATE \(Schemas.sqlInsert).ints")
    }

    /// Checks the rows raw postgres-nio or Fluent inserted in W1.
    func verifySQLInsert(count: Int) throws {
        let result = try integers(SQLTables.intsCheck("\(Schemas.sqlInsert).ints"))
        try expect(result, [Int64(count), expectedIntsTotal(count: count)], "W1's rows and their total")
    }

    /// Removes the benchmark's schemas (left by an earlier run that failed, or at the end).
    func dropSchemas() throws {
        try execute(Schemas.all.map { "DROP SCHEMA IF EXISTS \($0) CASCADE" })
    }

    func close() {
        try? dropSchemas()
        let admin = admin
        try? waitFor { try await admin.close() }
    }
}

/// The PostgreSQL schemas of the benchmark: one per Strata store (a store owns its schema), and
/// the tables raw postgres-nio and Fluent share, as raw SQLite and GRDB share theirs.
enum Schemas {
    /// Strata's W1 store, emptied before each run.
    static let strataInsert = "bench_strata_w1"
    /// Strata's store of W2's objects.
    static let strataInts = "bench_strata_ints"
    /// Strata's store of W4 and W5's items.
    static let strataItems = "bench_strata_items"
    /// N1's store, shared by its two containers.
    static let strataNotes = "bench_strata_n1"
    /// The `ints` and `item` tables raw postgres-nio and Fluent read (W2, W4, W5).
    static let sql = "bench_sql"
    /// The `ints` table raw postgres-nio and Fluent insert into (W1), emptied before each run.
    static let sqlInsert = "bench_sql_w1"

    static let all = [strataInsert, strataInts, strataItems, strataNotes, sql, sqlInsert]
}
