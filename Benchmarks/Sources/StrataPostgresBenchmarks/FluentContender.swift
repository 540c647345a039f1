import FluentKit
import FluentPostgresDriver
import BenchmarkSupport
import Foundation
import Logging
import NIOCore
import NIOPosix

/// W1 and W2's row as a Fluent model. `@unchecked Sendable`, as Fluent's models must be.
final class FluentInts: Model, @unchecked Sendable {
    static let schema = "ints"

    @ID(custom: "id", generatedBy: .database) var id: Int64?
    @Field(key: "a") var a: Int64
    @Field(key: "b") var b: Int64
    @Field(key: "c") var c: Int64
    @Field(key: "d") var d: Int64
    @Field(key: "e") var e: Int64
    @Field(key: "f") var f: Int64
    @Field(key: "g") var g: Int64
    @Field(key: "h") var h: Int64
    @Field(key: "i") var i: Int64
    @Field(key: "j") var j: Int64

    init() {}

    /// Row `row` as W1 writes it: `row * 10` to `row * 10 + 9`.
    init(row: Int) {
        let base = Int64(row &* 10)
        a = base
        b = base &+ 1
        c = base &+ 2
        d = base &+ 3
        e = base &+ 4
        f = base &+ 5
        g = base &+ 6
        h = base &+ 7
        i = base &+ 8
        j = base &+ 9
    }
}

/// W4 and W5's item as a Fluent model.
final class FluentItem: Model, @unchecked Sendable {
    static let schema = "item"

    @ID(custom: "id", generatedBy: .database) var id: Int64?
    @Field(key: "bucket") var bucket: Int64
    @Field(key: "price") var price: Int64
    @Field(key: "quantity") var quantity: Int64
    @Field(key: "serial") var serial: Int64

    init() {}
}

/// FluentKit with FluentPostgresDriver, standalone (no Vapor): `Databases` on the shared event
/// loops, a database handle as a request handler gets one (one event loop, its connection pool
/// kept open across runs), and idiomatic queries. Reads the same tables as raw postgres-nio.
final class FluentContender: Contender {
    let name = ContenderName.fluent
    private let server: BenchmarkServer
    private let databases: Databases
    /// The tables W2, W4 and W5 read (`bench_sql`).
    private let readDatabase: any Database
    /// The table W1 writes (`bench_sql_w1`).
    private let insertDatabase: any Database

    /// The most rows one batch `create` sends: each row binds ten values, and PostgreSQL takes
    /// at most 65,535 parameters per statement.
    static let rowsPerBatch = 5_000

    init(server: BenchmarkServer) {
        self.server = server
        databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        let read = DatabaseID(string: "bench-read")
        let insert = DatabaseID(string: "bench-insert")
        databases.use(
            .postgres(configuration: SQLPostgresConfiguration(coreConfiguration: server.connectionConfiguration, searchPath: [Schemas.sql])),
            as: read)
        databases.use(
            .postgres(
                configuration: SQLPostgresConfiguration(coreConfiguration: server.connectionConfiguration, searchPath: [Schemas.sqlInsert])),
            as: insert)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        readDatabase = databases.database(read, logger: server.logger, on: eventLoop)!
        insertDatabase = databases.database(insert, logger: server.logger, on: eventLoop)!
    }

    func prepareInts(count: Int) throws { try server.prepareSQLInts(count: count) }
    func prepareItems(count: Int) throws { try server.prepareSQLItems(count: count) }
    func prepareInsert() throws { try server.prepareSQLInsertTable() }
    func verifyInsert(count: Int) throws { try server.verifySQLInsert(count: count) }

    func insertInts(count: Int) throws {
        let database = insertDatabase
        try waitFor {
            let models = (0..<count).map { FluentInts(row: $0) }
            try await database.transaction { transaction in
                for start in stride(from: 0, to: models.count, by: Self.rowsPerBatch) {
                    try await models[start..<min(start + Self.rowsPerBatch, models.count)].create(on: transaction)
                }
            }
        }
    }

    func fetchInts() throws -> Int64 {
        let database = readDatabase
        return try waitFor {
            try await FluentInts.query(on: database).all().reduce(0) { total, row in
                total &+ row.a &+ row.b &+ row.c &+ row.d &+ row.e &+ row.f &+ row.g &+ row.h &+ row.i &+ row.j
            }
        }
    }

    func fetchBucket() throws -> BucketResult {
        let database = readDatabase
        return try waitFor {
            var result = BucketResult()
            for item in try await FluentItem.query(on: database).filter(\.$bucket == fetchedBucket).all() {
                result.add(bucket: item.bucket, price: item.price, quantity: item.quantity, serial: item.serial)
            }
            return result
        }
    }

    func aggregatePrices() throws -> (sum: Int64, average: Double?) {
        let database = readDatabase
        return try waitFor {
            // Fluent's `sum(\.$price)` and `average(\.$price)` decode the field's type, Int64,
            // but PostgreSQL's SUM and AVG of a bigint are numeric: both throw a decoding error.
            // A Fluent user asks for the aggregates as Decimals instead.
            let sum = try await FluentItem.query(on: database).aggregate(.sum, \.$price, as: Decimal?.self)
            let average = try await FluentItem.query(on: database).aggregate(.average, \.$price, as: Decimal?.self)
            guard let sum, let total = Int64(exactly: NSDecimalNumber(decimal: sum).int64Value), Decimal(total) == sum else {
                throw BenchmarkError("W5 returned no integer sum: \(String(describing: sum))")
            }
            return (total, average.map { NSDecimalNumber(decimal: $0).doubleValue })
        }
    }

    func close() {
        let databases = databases
        try? waitFor { await databases.shutdownAsync() }
    }
}
