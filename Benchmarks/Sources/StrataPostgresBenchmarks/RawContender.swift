import BenchmarkSupport
import Logging
import PostgresNIO

/// postgres-nio used directly: one connection, kept open; prepared statements; one transaction
/// for the writes; every column read by position into arrays. The floor: what the same SQL
/// costs with no layer above the driver.
///
/// W1 has two floors. `raw` executes the prepared INSERT once per row, all of them handed to the
/// connection at once (child tasks of a task group, none waiting for the one before) and then
/// awaited; postgres-nio still sends each only when the one before it finished, so a row costs
/// a round trip, but the caller never waits between rows. `raw-unnest` sends one
/// INSERT … SELECT FROM unnest($1::bigint[], …) with a column per array parameter, which is
/// what Strata's store does.
final class RawContender: Contender {
    let name: ContenderName
    private let server: BenchmarkServer
    private let connection: PostgresConnection
    private var logger: Logger { server.logger }

    /// - Parameter unnest: Whether W1 inserts with one unnest statement (`raw-unnest`).
    init(server: BenchmarkServer, unnest: Bool) throws {
        name = unnest ? .rawUnnest : .raw
        self.server = server
        let (configuration, logger) = (server.connectionConfiguration, server.logger)
        connection = try waitFor { try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger) }
    }

    func prepareInts(count: Int) throws { try server.prepareSQLInts(count: count) }
    func prepareItems(count: Int) throws { try server.prepareSQLItems(count: count) }
    func prepareInsert() throws { try server.prepareSQLInsertTable() }
    func verifyInsert(count: Int) throws { try server.verifySQLInsert(count: count) }

    func insertInts(count: Int) throws {
        let (connection, logger, unnest) = (connection, logger, name == .rawUnnest)
        try waitFor {
            try await connection.query("BEGIN", logger: logger)
            if unnest {
                var columns = Array(repeating: [Int64](), count: 10)
                for column in columns.indices { columns[column].reserveCapacity(count) }
                for row in 0..<count {
                    for column in 0..<10 { columns[column].append(Int64(row &* 10 &+ column)) }
                }
                _ = try await connection.execute(InsertIntsUnnestStatement(columns: columns), logger: logger)
            } else {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for row in 0..<count {
                        group.addTask {
                            _ = try await connection.execute(InsertIntsStatement(base: Int64(row &* 10)), logger: logger)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await connection.query("COMMIT", logger: logger)
        }
    }

    func fetchInts() throws -> Int64 {
        let (connection, logger) = (connection, logger)
        return try waitFor {
            var rows: [SelectIntsStatement.Row] = []
            for try await row in try await connection.execute(SelectIntsStatement(), logger: logger) { rows.append(row) }
            return rows.reduce(0) { total, row in
                total &+ row.0 &+ row.1 &+ row.2 &+ row.3 &+ row.4 &+ row.5 &+ row.6 &+ row.7 &+ row.8 &+ row.9
            }
        }
    }

    func fetchBucket() throws -> BucketResult {
        let (connection, logger) = (connection, logger)
        return try waitFor {
            var rows: [SelectBucketStatement.Row] = []
            for try await row in try await connection.execute(SelectBucketStatement(bucket: fetchedBucket), logger: logger) {
                rows.append(row)
            }
            var result = BucketResult()
            for (_, bucket, price, quantity, serial) in rows {
                result.add(bucket: bucket, price: price, quantity: quantity, serial: serial)
            }
            return result
        }
    }

    func aggregatePrices() throws -> (sum: Int64, average: Double?) {
        let (connection, logger) = (connection, logger)
        return try waitFor {
            for try await (sum, average) in try await connection.execute(AggregatePricesStatement(), logger: logger) {
                guard let sum else { throw BenchmarkError("W5 returned no sum") }
                return (sum, average)
            }
            throw BenchmarkError("W5 returned no row")
        }
    }

    func close() {
        let connection = connection
        try? waitFor { try await connection.close() }
    }
}
