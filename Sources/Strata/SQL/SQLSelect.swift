import Foundation

/// A fetch plan compiled for an SQL store: everything after `SELECT …`, with its bound values.
///
/// Every SQL store builds its fetches, counts, key queries, batch selections and value queries
/// from one of these, so that a plan means the same rows on every store. The store picks the
/// columns and reads the rows; ``sql(withOrder:groupBy:order:)`` gives the rest.
package struct SQLSelect<Dialect: SQLDialect> {
    /// The layout of the fetched entity.
    package var layout: StoreLayout.EntityLayout
    /// The entities whose rows the query may return; rows naming another entity (damaged by
    /// another program) are skipped where rows become IDs or objects.
    package var kinds: [String]
    /// The compiler that compiled the predicate; columns a caller selects come from it, so that
    /// their joins join the query.
    package var compiler: SQLQueryCompiler<Dialect>
    package var conditions: [String]
    package var sorts: [ResolvedSort]
    package var limit: Int?
    package var offset: Int

    /// The values bound to the query's placeholders, in order.
    package var arguments: Dialect.Arguments { compiler.arguments }

    /// Compiles a plan, or returns `nil` when it can match nothing.
    ///
    /// - Throws: ``StrataError/Code/unknownEntity`` for an entity the layout does not have, and
    ///   the compiler's errors.
    package init?(
        _ plan: FetchPlan, schema: Schema, layout storeLayout: StoreLayout, storeIdentifier: String,
        arguments: Dialect.Arguments
    ) throws {
        let entity = plan.entity
        guard let layout = storeLayout.entities[entity.name] else {
            throw StrataError(
                .unknownEntity,
                "The store has no entity named '\(entity.name)'."
                    + didYouMean(entity.name, in: storeLayout.entities.keys.sorted()),
                entityName: entity.name)
        }
        let kinds = plan.includesSubentities ? layout.kindNames : [entity.name]
        var compiler = SQLQueryCompiler<Dialect>(
            schema: schema, layout: storeLayout, storeIdentifier: storeIdentifier, rootEntity: entity,
            arguments: arguments)
        // A table that holds one entity needs no entity test: Strata writes no other rows into
        // it, and the test costs a quarter of a plain scan (aggregates, counts). Rows another
        // program damaged are still skipped where rows are decoded.
        let tableKinds = storeLayout.entities[entity.rootEntity.name]?.kindNames ?? []
        var conditions: [String] = []
        if Set(kinds) != Set(tableKinds) {
            conditions.append("t0.\(quoted(StoreLayout.entityColumn)) IN (" + entityNameList(kinds) + ")")
        }
        let primaryKey = "t0.\(quoted(StoreLayout.primaryKeyColumn))"
        if let keys = plan.primaryKeys {
            if keys.isEmpty { return nil }
            conditions.append(Dialect.primaryKeyTest(primaryKey, in: keys, to: &compiler.arguments))
        }
        if let range = plan.primaryKeyRange {
            conditions.append(
                "\(primaryKey) BETWEEN \(compiler.bind(.integer(range.lowerBound))) AND \(compiler.bind(.integer(range.upperBound)))"
            )
        }
        // The plan checked the names: attributes and to-one relationships, whose columns they name.
        for (name, value) in (plan.matching ?? [:]).sorted(by: { $0.key < $1.key }) {
            if value.isNull {
                conditions.append("t0.\(quoted(name)) IS NULL")
            } else {
                let type = entity.attribute(named: name)?.type
                conditions.append(
                    "t0.\(quoted(name)) = " + Dialect.equalityValue(value, forColumnOf: type, to: &compiler.arguments))
            }
        }
        if let predicate = plan.predicate {
            conditions.append(try compiler.compile(predicate))
        }
        self.layout = layout
        self.kinds = kinds
        self.compiler = compiler
        self.conditions = conditions
        self.sorts = plan.sorts
        self.limit = plan.fetchLimit
        self.offset = plan.fetchOffset
    }

    /// Whether the order needs Foundation's localized comparison where the store cannot give it
    /// (``SQLDialect/sortsLocalizedText``): the rows are then sorted, offset and limited here,
    /// by ``sortedOnClient(_:key:primaryKey:)``, on the sort keys ``clientSortKeys`` selects.
    package var sortsOnClient: Bool {
        !Dialect.sortsLocalizedText
            && sorts.contains { $0.comparison == .localizedStandard && ValueKind($0.type).isTextual }
    }

    /// The sort keys to select when sorting on the client (none otherwise).
    package var clientSortKeys: (expressions: [String], types: [AttributeType]) {
        mutating get {
            guard sortsOnClient else { return ([], []) }
            let expressions = sorts.map { compiler.propertyColumn(steps: $0.steps, number: $0.number) }
            return (expressions, sorts.map(\.type))
        }
    }

    /// ` FROM … WHERE … [GROUP BY …] [ORDER BY …] [LIMIT … OFFSET …]`; call once per query,
    /// after every selected column was compiled (the joins they need are added by it).
    ///
    /// - Parameters:
    ///   - withOrder: Whether to order by the plan's sorts (ties broken by primary key, except
    ///     in groups, which have no key of their own).
    ///   - groupBy: A ` GROUP BY …` clause, or nothing.
    ///   - order: An ` ORDER BY …` clause to use instead of the plan's.
    package mutating func sql(withOrder: Bool = true, groupBy: String = "", order override: String? = nil) -> String {
        let clientSorts = sortsOnClient && override == nil
        let order =
            override ?? (withOrder && !clientSorts ? compiler.orderBy(sorts, tieBreakingByPrimaryKey: groupBy.isEmpty) : "")
        var text =
            compiler.fromClause(table: layout.table)
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) + groupBy + order
        if !clientSorts || !withOrder {
            text += Dialect.limitClause(limit: limit.map { max(0, $0) }, offset: max(0, offset))
        }
        return text
    }

    /// `SELECT COUNT(*) …`: the number of rows the plan matches, limit and offset included.
    package mutating func countSQL() -> String {
        sorts = []
        if limit != nil || offset > 0 {
            return "SELECT COUNT(*) FROM (SELECT 1" + sql(withOrder: false) + ") counted"
        }
        return "SELECT COUNT(*)" + sql(withOrder: false)
    }

    /// `SELECT` of the primary key and entity name (then the client sort keys) of the rows the
    /// plan matches, in its order.
    package mutating func primaryKeysSQL() -> (sql: String, sortKeyTypes: [AttributeType]) {
        let keys = clientSortKeys
        let columns =
            ["t0.\(quoted(StoreLayout.primaryKeyColumn))", "t0.\(quoted(StoreLayout.entityColumn))"] + keys.expressions
        return ("SELECT " + columns.joined(separator: ", ") + sql(), keys.types)
    }

    /// `SELECT` of every column of `columns` (the table's, by name), then the client sort keys,
    /// of the rows the plan matches, in its order.
    package mutating func rowsSQL(columns: [String]) -> (sql: String, sortKeyTypes: [AttributeType]) {
        let keys = clientSortKeys
        return (
            "SELECT " + (columns.map { "t0.\(quoted($0))" } + keys.expressions).joined(separator: ", ") + sql(),
            keys.types
        )
    }

    /// Sorts rows by their selected sort keys as the in-memory evaluator does, then applies the
    /// offset and limit.
    package func sortedOnClient<Row>(_ rows: [Row], key: (Row) -> [AttributeValue], primaryKey: (Row) -> Int64)
        -> [Row]
    {
        let sorted = rows.sorted { a, b in
            let left = key(a)
            let right = key(b)
            for (index, sort) in sorts.enumerated() {
                let order = Self.compare(left[index], right[index], sort)
                if order != 0 { return sort.ascending ? order < 0 : order > 0 }
            }
            return primaryKey(a) < primaryKey(b)
        }
        let start = min(offset, sorted.count)
        let end = limit.map { min(sorted.count, start + max(0, $0)) } ?? sorted.count
        return Array(sorted[start..<end])
    }

    /// -1, 0 or 1; `nil` sorts first.
    private static func compare(_ a: AttributeValue, _ b: AttributeValue, _ sort: ResolvedSort) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): break
        }
        let kind = ValueKind(sort.type)
        if kind.isTextual, let x = ValueComparison.text(a), let y = ValueComparison.text(b) {
            switch SortOrdering.compare(x, y, sort.comparison) {
            case .orderedAscending: return -1
            case .orderedDescending: return 1
            case .orderedSame: return 0
            }
        }
        return ValueComparison.compare(a, b, as: kind) ?? 0
    }
}
