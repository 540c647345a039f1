import Foundation

/// How a store reads one column of a values fetch.
package enum SQLValuesColumn: Equatable {
    /// A value of the type, decoded as the store decodes attributes of it.
    case value(AttributeType)
    /// An integer sum: an integer, or — beyond `Int64`'s range — the nearest `Double`, in the
    /// form the dialect's ``SQLDialect/valuesAggregate(_:of:kind:exactIntegerSums:)`` gives it.
    case integerSum
}

extension SQLSelect {
    /// `SELECT …`: the property values and aggregates of a values request, one row per matching
    /// row or group, for every SQL store. The dialect gives only its aggregates and how it
    /// compares values for `DISTINCT` and `GROUP BY`.
    ///
    /// Columns are property values (through to-one relationships), `COUNT(*)` and aggregates;
    /// groups come in the order of their keys unless the request sorts; an aggregate over all
    /// rows has no order. Distinct rows come in the order of each one's first occurrence in
    /// the requested order.
    ///
    /// - Parameters:
    ///   - request: The values request, resolved.
    ///   - distinct: Whether to return each distinct row once.
    ///   - exactIntegerSums: Whether integer sums must be computed exactly where the dialect's
    ///     plain sum could overflow (see ``SQLDialect/valuesAggregate(_:of:kind:exactIntegerSums:)``).
    /// - Returns: The SQL and how to read each of its columns.
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a localized sort the dialect
    ///   cannot express (values cannot be sorted on the client after the fact: they may be
    ///   groups, or distinct).
    package mutating func valuesSQL(
        _ request: ResolvedValuesRequest, distinct: Bool, exactIntegerSums: Bool
    ) throws -> (sql: String, columns: [SQLValuesColumn]) {
        var expressions: [String] = []
        var columns: [SQLValuesColumn] = []
        for column in request.columns {
            switch column {
            case .property(let target):
                expressions.append(compiler.propertyColumn(steps: target.steps, number: target.number))
                columns.append(.value(target.type))
            case .countRows:
                expressions.append("COUNT(*)")
                columns.append(.value(.integer64))
            case .aggregate(let function, let target, let kind):
                let column = compiler.propertyColumn(steps: target.steps, number: target.number)
                if function == .count {
                    expressions.append("COUNT(\(column))")
                } else {
                    expressions.append(
                        Dialect.valuesAggregate(function, of: column, kind: kind, exactIntegerSums: exactIntegerSums))
                }
                switch (function, kind) {
                case (.count, _): columns.append(.value(.integer64))
                case (.sum, .decimal), (.average, .decimal): columns.append(.value(.decimal))
                case (.sum, .integer): columns.append(.integerSum)
                case (.sum, _), (.average, _): columns.append(.value(.double))
                case (.min, _), (.max, _): columns.append(.value(target.type))
                }
            }
        }
        let groupTerms = request.groupBy.map {
            Dialect.comparableValue(compiler.propertyColumn(steps: $0.steps, number: $0.number), type: $0.type)
        }
        // Groups in the order of their keys, each compared as the in-memory evaluator does.
        let groupOrderTerms = zip(groupTerms, request.groupBy).map {
            Dialect.orderTerm($0, kind: ValueKind($1.type), comparison: .standard, ascending: true)
        }
        if distinct || !groupTerms.isEmpty {
            for (index, column) in columns.enumerated() {
                if case .value(let type) = column { expressions[index] = Dialect.comparableValue(expressions[index], type: type) }
            }
        }
        let groupBy = groupTerms.isEmpty ? "" : " GROUP BY " + groupTerms.joined(separator: ", ")
        // An aggregate over all rows has no row order; groups come in the order of their keys.
        if request.isAggregate && groupTerms.isEmpty { sorts = [] }
        if sortsOnClient {
            throw StrataError(
                .unsupportedPredicate,
                "A values fetch cannot sort with localizedStandardCompare in this store; sort the values in memory.",
                entityName: request.entityName)
        }
        if distinct && !request.isAggregate && !sorts.isEmpty {
            // Each distinct row in the order of its first occurrence: number the rows in the
            // order asked for, keep each distinct row's first, and order by that (a `DISTINCT`
            // query cannot order by what it does not select).
            let (limit, offset) = (self.limit, self.offset)
            self.limit = nil
            self.offset = 0
            let order = compiler.orderBy(sorts)
            let body = sql(withOrder: false)
            let numbered = expressions.enumerated().map { "\($1) AS v\($0)" }.joined(separator: ", ")
            let outer = expressions.indices.map { "v\($0)" }.joined(separator: ", ")
            let text =
                "SELECT \(outer) FROM (SELECT \(numbered), row_number() OVER (\(order)) AS position\(body)) numbered"
                + " GROUP BY \(outer) ORDER BY MIN(position)"
                + Dialect.limitClause(limit: limit.map { max(0, $0) }, offset: max(0, offset))
            return (text, columns)
        }
        let groupOrder = groupTerms.isEmpty || !sorts.isEmpty ? nil : " ORDER BY " + groupOrderTerms.joined(separator: ", ")
        let body = sql(withOrder: !request.isAggregate || !sorts.isEmpty, groupBy: groupBy, order: groupOrder)
        return ("SELECT " + (distinct ? "DISTINCT " : "") + expressions.joined(separator: ", ") + body, columns)
    }
}

extension AggregateFunction {
    /// The collection operator that computes the same aggregate.
    package var collectionOperator: CollectionOperator {
        switch self {
        case .count: .count
        case .sum: .sum
        case .average: .average
        case .min: .min
        case .max: .max
        }
    }
}
