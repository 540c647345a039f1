import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// Property values and aggregates computed by the server, one array per row or group.
    ///
    /// Integer and decimal sums are exact (`numeric`); a sum of integers beyond `Int64`'s range
    /// comes back as a `Double`, as from the SQLite store.
    public func fetchValues(_ request: StoreValuesRequest) throws -> [[AttributeValue]] {
        guard var query = try makeQuery(request.plan) else { return [] }
        let entity = request.plan.entity
        let resolved = try ResolvedValuesRequest(request, schema: schema)
        var expressions: [String] = []
        var types: [AttributeType] = []
        // Columns of integer sums, as text: an integer, or a Double beyond Int64's range.
        var integerSums: Set<Int> = []
        for column in resolved.columns {
            switch column {
            case .property(let target):
                expressions.append(query.compiler.propertyColumn(steps: target.steps, number: target.number))
                types.append(target.type)
            case .countRows:
                expressions.append("COUNT(*)")
                types.append(.integer64)
            case .aggregate(let function, let target, let kind):
                let column = query.compiler.propertyColumn(steps: target.steps, number: target.number)
                switch (function, kind) {
                case (.count, _):
                    expressions.append("COUNT(\(column))")
                    types.append(.integer64)
                case (.sum, .decimal), (.average, .decimal):
                    expressions.append(PostgresDialect.aggregate(function.collectionOperator, of: column, kind: kind))
                    types.append(.decimal)
                case (.sum, .integer):
                    // Exact in numeric; beyond Int64's range, the nearest Double (as its text).
                    let sum = "COALESCE(SUM(\(column)), 0)"
                    integerSums.insert(expressions.count)
                    expressions.append(
                        "CASE WHEN \(sum) BETWEEN \(Int64.min) AND \(Int64.max) THEN \(sum)::text ELSE strata_double(\(sum))::text END")
                    types.append(.integer64)
                case (.sum, _), (.average, _):
                    expressions.append(
                        "(" + PostgresDialect.aggregate(function.collectionOperator, of: column, kind: kind == .integer ? .integer : .double) + ")::float8")
                    types.append(.double)
                case (.min, _), (.max, _):
                    expressions.append(PostgresDialect.aggregate(function.collectionOperator, of: column, kind: kind))
                    types.append(target.type)
                }
            }
        }
        let groupTerms = resolved.groupBy.map {
            let term = query.compiler.propertyColumn(steps: $0.steps, number: $0.number)
            return $0.type == .codable ? "\(term)::text" : term
        }
        let groupBy = groupTerms.isEmpty ? "" : " GROUP BY " + groupTerms.joined(separator: ", ")
        let isAggregate = resolved.isAggregate
        if isAggregate && groupTerms.isEmpty { query.sorts = [] }
        if query.sortsOnClient {
            throw StrataError(
                .unsupportedPredicate,
                "A values fetch cannot sort with localizedStandardCompare in a PostgreSQL store; sort the values in memory.",
                entityName: entity.name)
        }
        let groupOrder =
            !groupTerms.isEmpty && query.sorts.isEmpty
            ? " ORDER BY " + groupTerms.map { $0 + " NULLS FIRST" }.joined(separator: ", ") : nil
        if request.returnsDistinctResults || !groupTerms.isEmpty {
            // Codable values have no equality operator in PostgreSQL: compare their text.
            for index in expressions.indices where types[index] == .codable { expressions[index] += "::text" }
        }
        let sql: String
        if request.returnsDistinctResults && !isAggregate && !query.sorts.isEmpty {
            // PostgreSQL's DISTINCT wants its order among the results: number the rows in the
            // order asked for, keep each distinct result's first, and order by that.
            let (limit, offset) = (query.limit, query.offset)
            query.limit = nil
            query.offset = 0
            let order = query.compiler.orderBy(query.sorts)
            let body = query.sql(withOrder: false)
            let numbered = expressions.enumerated().map { "\($1) AS v\($0)" }.joined(separator: ", ")
            let outer = expressions.indices.map { "v\($0)" }.joined(separator: ", ")
            sql =
                "SELECT \(outer) FROM (SELECT \(numbered), row_number() OVER (\(order)) AS position\(body)) numbered GROUP BY \(outer) ORDER BY MIN(position)"
                + (limit.map { " LIMIT \(max(0, $0))" } ?? "") + (offset > 0 ? " OFFSET \(offset)" : "")
        } else {
            let body = query.sql(withOrder: !isAggregate || !query.sorts.isEmpty, groupBy: groupBy, order: groupOrder)
            sql = "SELECT " + (request.returnsDistinctResults ? "DISTINCT " : "") + expressions.joined(separator: ", ") + body
        }
        var rows: [[AttributeValue]] = []
        for row in try read(sql: sql, query.arguments).rows {
            let cells = row.makeRandomAccess()
            var values: [AttributeValue] = []
            values.reserveCapacity(types.count)
            for (index, type) in types.enumerated() {
                if integerSums.contains(index), let text = PostgresValueCoding.string(cells[index]) {
                    values.append(Int64(text).map { .integer($0) } ?? Double(text).map { .double($0) } ?? .null)
                } else {
                    values.append(PostgresValueCoding.attributeValue(cells[index], type: type))
                }
            }
            rows.append(values)
        }
        return rows
    }
}

extension AggregateFunction {
    /// The collection operator that computes the same aggregate.
    fileprivate var collectionOperator: CollectionOperator {
        switch self {
        case .count: .count
        case .sum: .sum
        case .average: .average
        case .min: .min
        case .max: .max
        }
    }
}
