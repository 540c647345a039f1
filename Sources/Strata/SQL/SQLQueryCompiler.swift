import Foundation

/// Compiles resolved predicates and sort descriptors to SQL, for every SQL store.
///
/// The compiler gives predicates the meaning the in-memory evaluator gives them; the store's
/// ``SQLDialect`` supplies the spellings (literals, typed binds, collations, text functions,
/// JSON access, exact aggregates). Every value is a bound parameter; every identifier comes from
/// the store's layout, which the schema's validated names produce.
///
/// Under `NOT` and `ALL`, each comparison compiles to an expression that is false, never
/// `NULL`, so that it keeps the two-valued meaning the evaluator gives it; elsewhere, where
/// `NULL` and false both drop a row, comparisons stay bare so that the database can use an
/// index for them (`IFNULL(x < ?, 0)` hides `x` from SQLite's planner).
package struct SQLQueryCompiler<Dialect: SQLDialect> {
    package let schema: Schema
    package let layout: StoreLayout
    package let storeIdentifier: String

    /// The values bound so far, in placeholder order.
    package var arguments: Dialect.Arguments
    private var aliasCount = 0
    private var scopes: [Scope] = []

    private struct Scope {
        var alias: String
        var entityName: String
        var joins: [String] = []
        var joinAliases: [[Int]: String] = [:]
    }

    /// A compiler for a query whose root rows are `rootEntity`'s, aliased `t0`, whose first
    /// placeholders are already bound in `arguments`.
    package init(
        schema: Schema, layout: StoreLayout, storeIdentifier: String, rootEntity: Entity, arguments: Dialect.Arguments
    ) {
        self.schema = schema
        self.layout = layout
        self.storeIdentifier = storeIdentifier
        self.arguments = arguments
        scopes = [Scope(alias: "t0", entityName: rootEntity.name)]
        aliasCount = 1
    }

    /// `FROM table t0 LEFT JOIN ...` for the root scope, after everything was compiled.
    package func fromClause(table: String) -> String {
        " FROM \(quoted(table)) t0" + scopes[0].joins.joined()
    }

    /// A placeholder for a new bound value, compared with values of `kind` when given.
    package mutating func bind(_ value: AttributeValue, as kind: ValueKind? = nil) -> String {
        Dialect.bind(value, as: kind, to: &arguments)
    }

    private mutating func newAlias(_ prefix: String = "t") -> String {
        defer { aliasCount += 1 }
        return "\(prefix)\(aliasCount)"
    }

    /// The alias of the row reached from a scope through to-one relationships, joining as
    /// needed (`LEFT JOIN`, so that an empty relationship reads as `NULL`).
    private mutating func alias(for steps: [RelationshipStep], scope: Int) -> String {
        var current = scopes[scope].alias
        var path: [Int] = []
        for step in steps {
            path.append(step.number)
            if let existing = scopes[scope].joinAliases[path] {
                current = existing
                continue
            }
            let destinationTable = layout.entities[step.destinationEntityName]?.table ?? step.destinationEntityName
            let column = layout.entities[step.entityName]?.toOneColumns[step.number] ?? step.name
            let next = newAlias()
            scopes[scope].joins.append(
                " LEFT JOIN \(quoted(destinationTable)) \(next) ON \(next).\(quoted(StoreLayout.primaryKeyColumn)) = \(current).\(quoted(column))"
            )
            scopes[scope].joinAliases[path] = next
            current = next
        }
        return current
    }

    private func entityName(after steps: [RelationshipStep], scope: Int) -> String {
        steps.last?.destinationEntityName ?? scopes[scope].entityName
    }

    private mutating func column(scope: Int, steps: [RelationshipStep], number: Int) -> String {
        let alias = alias(for: steps, scope: scope)
        let name = entityName(after: steps, scope: scope)
        let column = layout.entities[name]?.attributeColumns[number] ?? nil
        return "\(alias).\(quoted(column ?? "_missing"))"
    }

    // MARK: Predicates

    /// Compiles a predicate to a Boolean expression.
    ///
    /// - Parameter positive: Whether the result is only ever used as a filter (a `WHERE`
    ///   condition, possibly inside `AND` and `OR`), where `NULL` and false both drop the row.
    ///   Only under `NOT` must a comparison with `NULL` read as false; elsewhere it is left bare.
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a pattern the store's dialect
    ///   cannot run with the evaluator's meaning.
    package mutating func compile(_ predicate: ResolvedPredicate, positive: Bool = true) throws -> String {
        func twoValued(_ expression: String) -> String { positive ? expression : Dialect.nullAsFalse(expression) }
        switch predicate {
        case .constant(let value):
            return value ? Dialect.trueLiteral : Dialect.falseLiteral
        case .and(let parts):
            if parts.isEmpty { return Dialect.trueLiteral }
            return "(" + (try parts.map { try compile($0, positive: positive) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return Dialect.falseLiteral }
            return "(" + (try parts.map { try compile($0, positive: positive) }).joined(separator: " OR ") + ")"
        case .not(let part):
            return "(NOT " + (try compile(part, positive: false)) + ")"
        case .compare(let left, let comparisonOperator, let right, let options, let kind):
            // Constants are folded by the resolver; everything else is folded here, as the
            // evaluator folds it.
            let l = try operand(left, options: options, kind: kind)
            switch comparisonOperator {
            case .like:
                return try Dialect.like(l, pattern(right, options: options, kind: kind), to: &arguments)
            case .matches:
                return try Dialect.matches(l, pattern(right, options: [], kind: kind), options: options, to: &arguments)
            case .contains, .beginsWith, .endsWith:
                let r = try operand(right, options: options, kind: kind)
                return Dialect.nullAsFalse(Dialect.substringTest(comparisonOperator, l, r))
            case .between, .in:
                return Dialect.falseLiteral
            case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
                break
            }
            let subject = Dialect.comparable(l, kind: kind)
            if case .constant(let value) = right, value.isNull {
                switch comparisonOperator {
                case .equalTo: return "(\(subject) IS NULL)"
                case .notEqualTo: return "(\(subject) IS NOT NULL)"
                default: return Dialect.falseLiteral
                }
            }
            let r = Dialect.comparable(try operand(right, options: options, kind: kind), kind: kind)
            switch comparisonOperator {
            case .equalTo:
                // `=` can use an index; with a constant that is not NULL it drops the same rows.
                return right.isConstant ? twoValued("\(subject) = \(r)") : "(\(Dialect.isNotDistinct(subject, r)))"
            case .notEqualTo: return "(\(Dialect.isDistinct(subject, r)))"
            case .lessThan: return twoValued("\(subject) < \(r)")
            case .lessThanOrEqualTo: return twoValued("\(subject) <= \(r)")
            case .greaterThan: return twoValued("\(subject) > \(r)")
            default: return twoValued("\(subject) >= \(r)")
            }
        case .member(let operand, let values, let options, let kind):
            // A NULL in the list never makes a row match: leaving it out drops the same rows.
            let kept = values.filter { !$0.isNull }
            if kept.isEmpty { return Dialect.falseLiteral }
            let l = Dialect.comparable(try self.operand(operand, options: options, kind: kind), kind: kind)
            let list = kept.map { Dialect.comparable(bind($0, as: kind), kind: kind) }.joined(separator: ", ")
            return twoValued("\(l) IN (\(list))")
        case .between(let operand, let low, let high, let kind):
            let l = Dialect.comparable(try self.operand(operand, options: [], kind: kind), kind: kind)
            return twoValued("\(l) BETWEEN \(bind(low, as: kind)) AND \(bind(high, as: kind))")
        case .objectIn(let operand, let ids, let negated):
            guard case .object(let scope, let steps) = operand else {
                return negated ? Dialect.trueLiteral : Dialect.falseLiteral
            }
            let destination = schema.entity(named: entityName(after: steps, scope: scope))
            let keys = ids.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, let key = id.primaryKey,
                    destination?.kindNames.contains(id.entityName) ?? false
                else { return nil }
                return key
            }
            if keys.isEmpty { return negated ? Dialect.trueLiteral : Dialect.falseLiteral }
            let key = objectKey(scope: scope, steps: steps)
            let list = keys.map { bind(.integer($0)) }.joined(separator: ", ")
            let test = Dialect.nullAsFalse("\(key) IN (\(list))")
            return negated ? "(NOT \(test))" : test
        case .jsonContains(let operand, let wanted, let options):
            let column = try self.operand(operand, options: [], kind: .codable)
            return Dialect.jsonContains(column, wanted, options: options, to: &arguments)
        case .objectIsNil(let operand):
            guard case .object(let scope, let steps) = operand, !steps.isEmpty else { return Dialect.falseLiteral }
            return "(\(objectKey(scope: scope, steps: steps)) IS NULL)"
        case .quantified(let all, let collection, let body):
            let (source, correlation) = members(of: collection)
            let memberScope = scopes.count - 1
            // ALL tests NOT body: there the body must be two-valued.
            let bodySQL = try compile(body, positive: !all)
            let joins = scopes[memberScope].joins.joined()
            scopes.removeLast()
            if all {
                return "(NOT EXISTS (SELECT 1\(source)\(joins) WHERE \(correlation) AND NOT \(bodySQL)))"
            }
            return "(EXISTS (SELECT 1\(source)\(joins) WHERE \(correlation) AND \(bodySQL)))"
        }
    }

    /// The pattern operand of `LIKE` or `MATCHES`.
    private mutating func pattern(_ operand: ResolvedOperand, options: ComparisonOptions, kind: ValueKind) throws
        -> SQLPattern
    {
        if case .constant(.string(let pattern)) = operand { return .constant(pattern) }
        return .expression(try self.operand(operand, options: options, kind: kind))
    }

    /// The primary key of the object an operand reaches: the last relationship's foreign key.
    private mutating func objectKey(scope: Int, steps: [RelationshipStep]) -> String {
        guard let last = steps.last else { return "\(scopes[scope].alias).\(quoted(StoreLayout.primaryKeyColumn))" }
        let owner = alias(for: Array(steps.dropLast()), scope: scope)
        let column = layout.entities[last.entityName]?.toOneColumns[last.number] ?? last.name
        return "\(owner).\(quoted(column))"
    }

    /// Opens a scope for the members of a to-many relationship; returns its `FROM` clause and
    /// the condition that ties members to their owner. The caller compiles in the new scope and
    /// removes it.
    private mutating func members(of collection: ResolvedCollection) -> (String, String) {
        let owner = alias(for: collection.steps, scope: collection.scope)
        let ownerEntity = collection.relationship.entityName
        let member = newAlias("m")
        let memberLayout = layout.entities[collection.memberEntity]
        let memberTable = memberLayout?.table ?? collection.memberEntity
        let kinds = entityNameList(memberLayout?.kindNames ?? [collection.memberEntity])
        let kindTest = "\(member).\(quoted(StoreLayout.entityColumn)) IN (\(kinds))"
        let ownerKey = "\(owner).\(quoted(StoreLayout.primaryKeyColumn))"
        scopes.append(Scope(alias: member, entityName: collection.memberEntity))
        switch layout.entities[ownerEntity]?.toMany[collection.relationship.number] ?? nil {
        case .inverseColumn(let table, let column, _):
            return (" FROM \(quoted(table)) \(member)", "\(member).\(quoted(column)) = \(ownerKey) AND \(kindTest)")
        case .joinTable(let table, let sourceColumn, let targetColumn, _):
            let join = newAlias("j")
            return (
                " FROM \(quoted(table)) \(join) JOIN \(quoted(memberTable)) \(member) ON \(member).\(quoted(StoreLayout.primaryKeyColumn)) = \(join).\(quoted(targetColumn))",
                "\(join).\(quoted(sourceColumn)) = \(ownerKey) AND \(kindTest)"
            )
        case nil:
            return (" FROM \(quoted(memberTable)) \(member)", Dialect.falseLiteral)
        }
    }

    private mutating func operand(_ operand: ResolvedOperand, options: ComparisonOptions, kind: ValueKind) throws
        -> String
    {
        switch operand {
        case .constant(let value):
            return bind(value, as: kind)
        case .attribute(let scope, let steps, let number, _):
            return Dialect.folded(column(scope: scope, steps: steps, number: number), options: options)
        case .object(let scope, let steps):
            return objectKey(scope: scope, steps: steps)
        case .aggregate(let collectionOperator, let collection, let attribute, let filter):
            let (source, correlation) = members(of: collection)
            let memberScope = scopes.count - 1
            var condition = correlation
            if let filter { condition += " AND " + (try compile(filter)) }
            var value = "COUNT(*)"
            if let attribute {
                let column = column(scope: memberScope, steps: attribute.steps, number: attribute.number)
                value = Dialect.aggregate(collectionOperator, of: column, kind: ValueKind(attribute.type))
            }
            let joins = scopes[memberScope].joins.joined()
            scopes.removeLast()
            return Dialect.folded("(SELECT \(value)\(source)\(joins) WHERE \(condition))", options: options)
        }
    }

    // MARK: Sorting

    /// `ORDER BY` terms for the sort descriptors, ending with the primary key so that ties keep
    /// the order objects were saved in (unless `tieBreakingByPrimaryKey` is false: grouped rows
    /// have no key of their own); empty when there is nothing to order by.
    package mutating func orderBy(_ sorts: [ResolvedSort], tieBreakingByPrimaryKey: Bool = true) -> String {
        var terms: [String] = []
        for sort in sorts {
            let column = column(scope: 0, steps: sort.steps, number: sort.number)
            terms.append(
                Dialect.orderTerm(column, kind: ValueKind(sort.type), comparison: sort.comparison, ascending: sort.ascending))
        }
        if tieBreakingByPrimaryKey { terms.append("t0.\(quoted(StoreLayout.primaryKeyColumn)) ASC") }
        return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
    }

    /// A column expression for a fetched property, a sort key or a group-by key.
    package mutating func propertyColumn(steps: [RelationshipStep], number: Int) -> String {
        column(scope: 0, steps: steps, number: number)
    }
}
