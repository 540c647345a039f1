import BenchmarkSupport
import PostgresNIO

// The raw contender's prepared statements: postgres-nio prepares each once per connection
// (on first use, which the warm-up run makes) and then only binds and executes it.

/// W1: one row.
struct InsertIntsStatement: PostgresPreparedStatement {
    static let name = "bench_insert_ints"
    static let sql =
        "INSERT INTO \(Schemas.sqlInsert).ints (a, b, c, d, e, f, g, h, i, j) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    static var bindingDataTypes: [PostgresDataType] { Array(repeating: .int8, count: 10) }
    typealias Row = ()

    /// The first value of the row; the others follow it.
    var base: Int64

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        for offset in 0..<10 as Range<Int64> { bindings.append(base &+ offset) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// W1 as Strata's store writes it: every column as one array parameter, unnested by the server.
struct InsertIntsUnnestStatement: PostgresPreparedStatement {
    static let name = "bench_insert_ints_unnest"
    static let sql =
        "INSERT INTO \(Schemas.sqlInsert).ints (a, b, c, d, e, f, g, h, i, j) SELECT * FROM unnest("
        + (1...10).map { "$\($0)::bigint[]" }.joined(separator: ", ") + ")"
    typealias Row = ()

    /// Ten columns of values.
    var columns: [[Int64]]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        for column in columns { bindings.append(column) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// W2: every row, every column.
struct SelectIntsStatement: PostgresPreparedStatement {
    static let name = "bench_select_ints"
    static let sql = "SELECT a, b, c, d, e, f, g, h, i, j FROM \(Schemas.sql).ints"
    typealias Row = (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)

    func makeBindings() -> PostgresBindings { PostgresBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// W4: one bucket's items, every column.
struct SelectBucketStatement: PostgresPreparedStatement {
    static let name = "bench_select_bucket"
    static let sql = "SELECT id, bucket, price, quantity, serial FROM \(Schemas.sql).item WHERE bucket = $1"
    typealias Row = (Int64, Int64, Int64, Int64, Int64)

    var bucket: Int64

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(bucket)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// W5: both aggregates in one query (SUM of bigint is numeric, AVG numeric: cast to what the
/// program reads).
struct AggregatePricesStatement: PostgresPreparedStatement {
    static let name = "bench_aggregate_prices"
    static let sql = "SELECT SUM(price)::bigint, AVG(price)::float8 FROM \(Schemas.sql).item"
    typealias Row = (Int64?, Double?)

    func makeBindings() -> PostgresBindings { PostgresBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
