import Foundation
import PostgresNIO
import Strata

/// Counts, keys and values through the queries every SQL store shares.
extension PostgresStore: SQLStore {
    package typealias Dialect = PostgresDialect
    package typealias RowReader = PostgresRowReader

    package var storeLayout: StoreLayout { layout.base }

    /// Property values and aggregates computed by the server, one array per row or group.
    ///
    /// Integer and decimal sums are exact (`numeric`); a sum of integers beyond `Int64`'s range
    /// comes back as a `Double`, as from the SQLite store.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Movie>(), in: store.schema)
    /// let request = StoreValuesRequest(
    ///     plan: plan, columns: [.property("year"), .aggregate(.count, nil)], groupBy: ["year"])
    /// for row in try store.fetchValues(request) { print(row[0], row[1]) }   // each year and its number of movies
    /// ```
    public func fetchValues(_ request: StoreValuesRequest) throws -> [[AttributeValue]] {
        try values(request, exactIntegerSums: true)
    }
}

/// The cells of one row of a query's result, read as the shared queries read them.
package struct PostgresRowReader: SQLRowReading {
    let cells: PostgresRandomAccessRow

    package func int64(at column: Int) -> Int64? { PostgresValueCoding.integer(cells[column]) }

    package func entityName(at column: Int, among names: [String]) -> String? {
        guard let name = PostgresValueCoding.string(cells[column]), names.contains(name) else { return nil }
        return name
    }

    package func attributeValue(at column: Int, type: AttributeType) -> AttributeValue {
        PostgresValueCoding.attributeValue(cells[column], type: type)
    }

    /// An integer, or the nearest `Double` beyond `Int64`'s range, sent as text.
    package func integerSum(at column: Int) -> AttributeValue {
        let text = PostgresValueCoding.string(cells[column]) ?? ""
        return Int64(text).map { .integer($0) } ?? Double(text).map { .double($0) } ?? .null
    }
}
