import Foundation
import GRDB

/// Compiles resolved predicates and sort descriptors to SQLite SQL.
///
/// Every value is a bound parameter; every identifier comes from the store's layout (which the
/// schema's validated names produce). Under `NOT` and `ALL`, each comparison compiles to an
/// expression that is 0 or 1, never `NULL`, so that they keep the two-valued meaning the
/// in-memory evaluator gives them; elsewhere, where `NULL` and 0 both drop a row, comparisons
/// stay bare so that SQLite can use indexes for ranges.
struct SQLiteQueryCompiler {
    let schema: Schema
    let layout: StoreLayout
    let storeIdentifier: String

    private(set) var arguments: [DatabaseValue] = []
    private var aliasCount = 0
    private var scopes: [Scope] = []

    private struct Scope {
        var alias: String
        var entityName: String
        var joins: [String] = []
        var joinAliases: [[Int]: String] = [:]
    }

    init(schema: Schema, layout: StoreLayout, storeIdentifier: String, rootEntity: Entity) {
        self.schema = schema
        self.layout = layout
        self.storeIdentifier = storeIdentifier
        scopes = [Scope(alias: "t0", entityName: rootEntity.name)]
        aliasCount = 1
    }

    /// `FROM table t0 LEFT JOIN ...` for the root scope, after everything was compiled.
    func fromClause(table: String) -> String {
        " FROM \(quoted(table)) t0" + scopes[0].joins.joined()
    }

    private mutating func newAlias(_ prefix: String = "t") -> String {
        defer { aliasCount += 1 }
        return "\(prefix)\(aliasCount)"
    }

    private mutating func bind(_ value: AttributeValue) -> String {
        arguments.append(SQLiteValueCoding.databaseValue(value))
        return "?"
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

    /// Compiles a predicate.
    ///
    /// - Parameter positive: Whether the result is only ever used as a filter (a `WHERE`
    ///   condition, possibly inside `AND` and `OR`), where `NULL` and 0 both drop the row. Only
    ///   under `NOT` must a comparison with `NULL` read as 0; elsewhere it is left bare, so that
    ///   SQLite can use an index for a range (`IFNULL(x < ?, 0)` hides `x` from the planner).
    mutating func compile(_ predicate: ResolvedPredicate, positive: Bool = true) -> String {
        func twoValued(_ expression: String) -> String { positive ? expression : "IFNULL(\(expression), 0)" }
        switch predicate {
        case .constant(let value):
            return value ? "1" : "0"
        case .and(let parts):
            if parts.isEmpty { return "1" }
            return "(" + parts.map { compile($0, positive: positive) }.joined(separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return "0" }
            return "(" + parts.map { compile($0, positive: positive) }.joined(separator: " OR ") + ")"
        case .not(let part):
            return "(NOT " + compile(part, positive: false) + ")"
        case .compare(let left, let comparisonOperator, let right, let options, let kind):
            // Constants are folded by the resolver; everything else is folded here, as the
            // evaluator folds it.
            let l = operand(left, options: options)
            let r = operand(right, options: comparisonOperator == .matches ? [] : options)
            let collate = kind == .decimal ? " COLLATE \(SQLiteFunctions.decimalCollation)" : ""
            switch comparisonOperator {
            case .equalTo: return "(\(l) IS \(r)\(collate))"
            case .notEqualTo: return "(\(l) IS NOT \(r)\(collate))"
            case .lessThan: return twoValued("\(l) < \(r)\(collate)")
            case .lessThanOrEqualTo: return twoValued("\(l) <= \(r)\(collate)")
            case .greaterThan: return twoValued("\(l) > \(r)\(collate)")
            case .greaterThanOrEqualTo: return twoValued("\(l) >= \(r)\(collate)")
            case .contains: return "IFNULL(instr(\(l), \(r)) > 0, 0)"
            case .beginsWith: return "IFNULL(instr(\(l), \(r)) = 1, 0)"
            case .endsWith: return "IFNULL(strata_ends_with(\(l), \(r)), 0)"
            case .like: return "IFNULL(strata_like(\(l), \(r)), 0)"
            case .matches: return "IFNULL(strata_matches(\(l), \(r), \(options.rawValue)), 0)"
            case .between, .in: return "0"
            }
        case .member(let operand, let values, let options, let kind):
            if values.isEmpty { return "0" }
            let l = self.operand(operand, options: options)
            let collate = kind == .decimal ? " COLLATE \(SQLiteFunctions.decimalCollation)" : ""
            let list = values.map { bind($0) }.joined(separator: ", ")
            return twoValued("\(l)\(collate) IN (\(list))")
        case .between(let operand, let low, let high, let kind):
            let l = self.operand(operand, options: [])
            let collate = kind == .decimal ? " COLLATE \(SQLiteFunctions.decimalCollation)" : ""
            return twoValued("\(l)\(collate) BETWEEN \(bind(low)) AND \(bind(high))")
        case .objectIn(let operand, let ids, let negated):
            guard case .object(let scope, let steps) = operand else { return negated ? "1" : "0" }
            let destination = schema.entity(named: entityName(after: steps, scope: scope))
            let keys = ids.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, let key = id.primaryKey,
                    destination?.kindNames.contains(id.entityName) ?? false
                else { return nil }
                return key
            }
            if keys.isEmpty { return negated ? "1" : "0" }
            let key = objectKey(scope: scope, steps: steps)
            let list = keys.map { bind(.integer($0)) }.joined(separator: ", ")
            let test = "IFNULL(\(key) IN (\(list)), 0)"
            return negated ? "(NOT \(test))" : test
        case .jsonContains(let operand, let wanted, let options):
            let column = self.operand(operand, options: [])
            let element = options.isEmpty ? "value" : "strata_fold(value, \(options.rawValue))"
            // Only arrays and objects have elements; anything else (a scalar) has none.
            return
                "(json_type(\(column)) IN ('array', 'object') AND EXISTS (SELECT 1 FROM json_each(\(column)) WHERE \(element) = \(bind(wanted))))"
        case .objectIsNil(let operand):
            guard case .object(let scope, let steps) = operand, !steps.isEmpty else { return "0" }
            return "(\(objectKey(scope: scope, steps: steps)) IS NULL)"
        case .quantified(let all, let collection, let body):
            let (source, correlation) = members(of: collection)
            let memberScope = scopes.count - 1
            // ALL tests NOT body: there the body must be two-valued.
            let bodySQL = compile(body, positive: !all)
            let joins = scopes[memberScope].joins.joined()
            scopes.removeLast()
            if all {
                return "(NOT EXISTS (SELECT 1\(source)\(joins) WHERE \(correlation) AND NOT \(bodySQL)))"
            }
            return "(EXISTS (SELECT 1\(source)\(joins) WHERE \(correlation) AND \(bodySQL)))"
        }
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
        // Entity names are validated identifiers, so they can be SQL literals.
        let kinds = (memberLayout?.kindNames ?? [collection.memberEntity]).map { "'\($0)'" }.joined(separator: ", ")
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
            return (" FROM \(quoted(memberTable)) \(member)", "0")
        }
    }

    private mutating func operand(_ operand: ResolvedOperand, options: ComparisonOptions) -> String {
        switch operand {
        case .constant(let value):
            return bind(value)
        case .attribute(let scope, let steps, let number, _):
            let column = column(scope: scope, steps: steps, number: number)
            return options.isEmpty ? column : "strata_fold(\(column), \(options.rawValue))"
        case .object(let scope, let steps):
            return objectKey(scope: scope, steps: steps)
        case .aggregate(let collectionOperator, let collection, let attribute, let filter):
            let (source, correlation) = members(of: collection)
            let memberScope = scopes.count - 1
            var condition = correlation
            if let filter { condition += " AND " + compile(filter) }
            var value = "COUNT(*)"
            if let attribute {
                let column = column(scope: memberScope, steps: attribute.steps, number: attribute.number)
                let kind = ValueKind(attribute.type)
                switch (collectionOperator, kind) {
                case (.count, _): value = "COUNT(*)"
                case (.sum, .decimal): value = "strata_decimal_sum(\(column))"
                case (.sum, .integer): value = "strata_integer_sum(\(column))"
                case (.sum, _): value = "strata_double_sum(\(column))"
                case (.average, .decimal): value = "strata_decimal_avg(\(column))"
                case (.average, .integer): value = "strata_integer_avg(\(column))"
                case (.average, _): value = "strata_double_avg(\(column))"
                case (.min, .decimal): value = "MIN(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
                case (.max, .decimal): value = "MAX(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
                case (.min, _): value = "MIN(\(column))"
                case (.max, _): value = "MAX(\(column))"
                }
            }
            let joins = scopes[memberScope].joins.joined()
            scopes.removeLast()
            let aggregate = "(SELECT \(value)\(source)\(joins) WHERE \(condition))"
            return options.isEmpty ? aggregate : "strata_fold(\(aggregate), \(options.rawValue))"
        }
    }

    // MARK: Sorting

    /// `ORDER BY` terms for the sort descriptors, ending with the primary key so that ties keep
    /// the order objects were saved in.
    mutating func orderBy(_ sorts: [ResolvedSort]) -> String {
        var terms: [String] = []
        for sort in sorts {
            var term = column(scope: 0, steps: sort.steps, number: sort.number)
            let kind = ValueKind(sort.type)
            if kind == .decimal {
                term += " COLLATE \(SQLiteFunctions.decimalCollation)"
            } else if kind.isTextual {
                switch sort.comparison {
                case .standard: break
                case .caseInsensitive: term += " COLLATE \(SQLiteFunctions.caseInsensitiveCollation)"
                case .localizedStandard: term += " COLLATE \(SQLiteFunctions.localizedCollation)"
                }
            }
            terms.append(term + (sort.ascending ? " ASC" : " DESC"))
        }
        terms.append("t0.\(quoted(StoreLayout.primaryKeyColumn)) ASC")
        return " ORDER BY " + terms.joined(separator: ", ")
    }

    /// A column expression for a fetched property or group-by key.
    mutating func propertyColumn(steps: [RelationshipStep], number: Int) -> String {
        column(scope: 0, steps: steps, number: number)
    }
}
