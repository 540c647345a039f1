import Foundation
import PostgresNIO
import Strata

/// Compiles resolved predicates and sort descriptors to PostgreSQL SQL.
///
/// It gives them the meaning the in-memory evaluator and the SQLite store give them: text
/// compares by UTF-8 bytes (the columns are `COLLATE "C"`), `[c]`/`[d]` fold with
/// `strata_fold`, which the store creates from Swift's own folding tables, `LIKE` patterns are
/// translated, `MATCHES` runs when its pattern means the same to PostgreSQL's engine (else a
/// typed error), and `NULL`s sort first, as in SQLite. Every value is a bound parameter; every
/// identifier comes from the store's layout.
struct PostgresQueryCompiler {
    let schema: Schema
    let layout: StoreLayout
    let storeIdentifier: String

    private(set) var bindings = PostgresBindings()
    private var aliasCount = 0
    private var scopes: [Scope] = []

    private struct Scope {
        var alias: String
        var entityName: String
        var joins: [String] = []
        var joinAliases: [[Int]: String] = [:]
    }

    init(schema: Schema, layout: StoreLayout, storeIdentifier: String, rootEntity: Entity, bindings: PostgresBindings = PostgresBindings()) {
        self.schema = schema
        self.layout = layout
        self.storeIdentifier = storeIdentifier
        self.bindings = bindings
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

    /// A placeholder for a new bound value.
    mutating func bind(_ value: AttributeValue) -> String {
        if value.isNull { return "NULL" }
        PostgresValueCoding.bind(value, to: &bindings)
        return "$\(bindings.count)"
    }

    /// A placeholder for a value compared with values of `kind`, converted to its column type.
    private mutating func bind(_ value: AttributeValue, as kind: ValueKind) -> String {
        switch (value, kind) {
        case (.integer(let number), .boolean): return bind(.boolean(number != 0))
        case (.boolean(let flag), .integer): return bind(.integer(flag ? 1 : 0))
        case (.boolean(let flag), .double), (.boolean(let flag), .date): return bind(.double(flag ? 1 : 0))
        case (.codable(let json), _): return bind(.string(String(decoding: json, as: UTF8.self)))
        case (.integer(let number), .date): return bind(.double(Double(number)))
        default: return bind(value)
        }
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
    ///   condition, possibly inside `AND` and `OR`), where `NULL` and `FALSE` both drop the row.
    ///   Under `NOT` a comparison with `NULL` must read as `FALSE`; elsewhere it stays bare so
    ///   that PostgreSQL can use an index.
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a `MATCHES` pattern PostgreSQL
    ///   would read differently, or a `LIKE` pattern that is not a constant.
    mutating func compile(_ predicate: ResolvedPredicate, positive: Bool = true) throws -> String {
        func twoValued(_ expression: String) -> String { positive ? expression : "COALESCE(\(expression), FALSE)" }
        switch predicate {
        case .constant(let value):
            return value ? "TRUE" : "FALSE"
        case .and(let parts):
            if parts.isEmpty { return "TRUE" }
            return "(" + (try parts.map { try compile($0, positive: positive) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return "FALSE" }
            return "(" + (try parts.map { try compile($0, positive: positive) }).joined(separator: " OR ") + ")"
        case .not(let part):
            return "(NOT " + (try compile(part, positive: false)) + ")"
        case .compare(let left, let comparisonOperator, let right, let options, let kind):
            let codable = kind == .codable ? "::text" : ""
            if comparisonOperator == .like {
                guard case .constant(let patternValue) = right, case .string(let pattern) = patternValue else {
                    throw StrataError(
                        .unsupportedPredicate,
                        "LIKE needs a constant pattern in a PostgreSQL store; compare with a string, not a key path.")
                }
                let l = try operand(left, options: options, kind: kind)
                return "COALESCE(\(l) LIKE \(bind(.string(Self.likePattern(pattern)))), FALSE)"
            }
            if comparisonOperator == .matches {
                guard case .constant(let patternValue) = right, case .string(let pattern) = patternValue else {
                    throw StrataError(
                        .unsupportedPredicate,
                        "MATCHES needs a constant pattern in a PostgreSQL store; compare with a string, not a key path.")
                }
                guard options.isEmpty else {
                    throw StrataError(
                        .unsupportedPredicate,
                        "MATCHES[\(options.contains(.caseInsensitive) ? "c" : "")\(options.contains(.diacriticInsensitive) ? "d" : "")] cannot run in a PostgreSQL store: ICU and PostgreSQL fold letters differently inside regular expressions. Match without options (spell the cases out, [Aa]), or filter in memory.")
                }
                let l = try operand(left, options: [], kind: kind)
                let translated = try PostgresRegularExpression.translate(pattern)
                return "COALESCE(\(l) ~ \(bind(.string(translated))), FALSE)"
            }
            let l = try operand(left, options: options, kind: kind) + codable
            if case .constant(let value) = right, value.isNull {
                switch comparisonOperator {
                case .equalTo: return "(\(l) IS NULL)"
                case .notEqualTo: return "(\(l) IS NOT NULL)"
                default: return "FALSE"
                }
            }
            let r = try operand(right, options: options, kind: kind) + codable
            let rightIsConstant = right.isConstant
            switch comparisonOperator {
            case .equalTo:
                // `=` can use an index; with a constant that is not NULL it drops the same rows.
                return rightIsConstant ? twoValued("\(l) = \(r)") : "(\(l) IS NOT DISTINCT FROM \(r))"
            case .notEqualTo: return "(\(l) IS DISTINCT FROM \(r))"
            case .lessThan: return twoValued("\(l) < \(r)")
            case .lessThanOrEqualTo: return twoValued("\(l) <= \(r)")
            case .greaterThan: return twoValued("\(l) > \(r)")
            case .greaterThanOrEqualTo: return twoValued("\(l) >= \(r)")
            case .contains: return "COALESCE(strpos(\(l), \(r)) > 0, FALSE)"
            case .beginsWith: return "COALESCE(starts_with(\(l), \(r)), FALSE)"
            case .endsWith: return "COALESCE(right(\(l), length(\(r))) = \(r), FALSE)"
            case .like, .matches, .between, .in: return "FALSE"
            }
        case .member(let operand, let values, let options, let kind):
            let kept = values.filter { !$0.isNull }
            if kept.isEmpty { return "FALSE" }
            let codable = kind == .codable ? "::text" : ""
            let l = try self.operand(operand, options: options, kind: kind) + codable
            let list = kept.map { bind($0, as: kind) + codable }.joined(separator: ", ")
            return twoValued("\(l) IN (\(list))")
        case .between(let operand, let low, let high, let kind):
            let l = try self.operand(operand, options: [], kind: kind)
            return twoValued("\(l) BETWEEN \(bind(low, as: kind)) AND \(bind(high, as: kind))")
        case .objectIn(let operand, let ids, let negated):
            guard case .object(let scope, let steps) = operand else { return negated ? "TRUE" : "FALSE" }
            let destination = schema.entity(named: entityName(after: steps, scope: scope))
            let keys = ids.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, let key = id.primaryKey,
                    destination?.kindNames.contains(id.entityName) ?? false
                else { return nil }
                return key
            }
            if keys.isEmpty { return negated ? "TRUE" : "FALSE" }
            let key = objectKey(scope: scope, steps: steps)
            let list = keys.map { bind(.integer($0)) }.joined(separator: ", ")
            let test = "COALESCE(\(key) IN (\(list)), FALSE)"
            return negated ? "(NOT \(test))" : test
        case .jsonContains(let operand, let wanted, let options):
            let column = try self.operand(operand, options: [], kind: .codable)
            let element = "e.value"
            let test: String
            switch wanted {
            case .string:
                let text = "(\(element) #>> '{}')"
                test = "json_typeof(\(element)) = 'string' AND \(options.isEmpty ? text : "strata_fold(\(text), \(options.rawValue))") = \(bind(wanted))"
            case .integer(let number):
                test =
                    "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::numeric = \(bind(.decimal(Decimal(number))))) OR (json_typeof(\(element)) = 'boolean' AND (CASE WHEN \(element)::text = 'true' THEN 1 ELSE 0 END) = \(bind(.integer(number)))))"
            case .boolean(let flag):
                test =
                    "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::numeric = \(flag ? 1 : 0)) OR (json_typeof(\(element)) = 'boolean' AND \(element)::text = '\(flag ? "true" : "false")'))"
            case .double, .float:
                let number: Double =
                    if case .double(let x) = wanted { x } else if case .float(let x) = wanted { Double(x) } else { 0 }
                test =
                    "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::float8 = \(bind(.double(number)))) OR (json_typeof(\(element)) = 'boolean' AND (CASE WHEN \(element)::text = 'true' THEN 1 ELSE 0 END) = \(bind(.double(number)))))"
            default:
                return "FALSE"
            }
            // The elements of an array or the values of an object; a scalar has none.
            return
                "EXISTS (SELECT 1 FROM (SELECT value FROM json_array_elements(CASE WHEN json_typeof(\(column)) = 'array' THEN \(column) END) UNION ALL SELECT value FROM json_each(CASE WHEN json_typeof(\(column)) = 'object' THEN \(column) END)) e WHERE \(test))"
        case .objectIsNil(let operand):
            guard case .object(let scope, let steps) = operand, !steps.isEmpty else { return "FALSE" }
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
            return (" FROM \(quoted(memberTable)) \(member)", "FALSE")
        }
    }

    private mutating func operand(_ operand: ResolvedOperand, options: ComparisonOptions, kind: ValueKind) throws -> String {
        switch operand {
        case .constant(let value):
            return bind(value, as: kind)
        case .attribute(let scope, let steps, let number, _):
            let column = column(scope: scope, steps: steps, number: number)
            return options.isEmpty ? column : "strata_fold(\(column), \(options.rawValue))"
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
                let kind = ValueKind(attribute.type)
                value = Self.aggregate(collectionOperator, of: column, kind: kind)
            }
            let joins = scopes[memberScope].joins.joined()
            scopes.removeLast()
            let aggregate = "(SELECT \(value)\(source)\(joins) WHERE \(condition))"
            return options.isEmpty ? aggregate : "strata_fold(\(aggregate), \(options.rawValue))"
        }
    }

    /// A collection operator over a column, with the in-memory evaluator's meaning
    /// (`DoubleSum`, `IntegerSum`): double sums exact and rounded once (`strata_exact`,
    /// `strata_double`), so the same in any order and with no overflow on the way; integer sums
    /// exact, and the nearest double when beyond `Int64`; averages from those sums; no rows sum
    /// to 0; the extremes of Booleans are `bool_and` and `bool_or`.
    static func aggregate(_ collectionOperator: CollectionOperator, of column: String, kind: ValueKind) -> String {
        switch (collectionOperator, kind) {
        case (.count, _): return "COUNT(*)"
        case (.sum, .double):
            return "CASE WHEN COUNT(\(column)) = 0 THEN 0 ELSE strata_double(SUM(strata_exact(\(column)))) END"
        case (.average, .double):
            return "(strata_double(SUM(strata_exact(\(column)))) / NULLIF(COUNT(\(column)), 0))"
        case (.sum, .integer):
            let sum = "COALESCE(SUM(\(column)), 0)"
            return "CASE WHEN \(sum) BETWEEN \(Int64.min) AND \(Int64.max) THEN \(sum) ELSE strata_exact(strata_double(\(sum))) END"
        case (.average, .integer):
            return "(strata_double(SUM(\(column))) / NULLIF(COUNT(\(column)), 0))"
        case (.sum, _): return "COALESCE(SUM(\(column)), 0)"
        case (.average, _): return "AVG(\(column))"
        case (.min, .boolean): return "bool_and(\(column))"
        case (.max, .boolean): return "bool_or(\(column))"
        case (.min, _): return "MIN(\(column))"
        case (.max, _): return "MAX(\(column))"
        }
    }

    // MARK: Sorting

    /// `ORDER BY` terms for the sort descriptors, ending with the primary key so that ties keep
    /// the order objects were saved in. `NULL`s come first, as in SQLite and in memory.
    mutating func orderBy(_ sorts: [ResolvedSort], tieBreakingByPrimaryKey: Bool = true) -> String {
        var terms: [String] = []
        for sort in sorts {
            var term = column(scope: 0, steps: sort.steps, number: sort.number)
            if ValueKind(sort.type).isTextual, sort.comparison == .caseInsensitive {
                term = "strata_fold(\(term), \(ComparisonOptions.caseInsensitive.rawValue))"
            }
            terms.append(term + (sort.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"))
        }
        if tieBreakingByPrimaryKey { terms.append("t0.\(quoted(StoreLayout.primaryKeyColumn)) ASC") }
        return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
    }

    /// A column expression for a fetched property, a sort key or a group-by key.
    mutating func propertyColumn(steps: [RelationshipStep], number: Int) -> String {
        column(scope: 0, steps: steps, number: number)
    }

    // MARK: LIKE

    /// A Strata `LIKE` pattern (`*` any run, `?` one character, `\` escapes) as a PostgreSQL
    /// one (`%`, `_`, with `\` escaping PostgreSQL's own wildcards).
    static func likePattern(_ pattern: String) -> String {
        var result = ""
        var iterator = pattern.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            switch scalar {
            case "*": result += "%"
            case "?": result += "_"
            case "\\":
                let next = iterator.next() ?? "\\"
                result += escapedLikeLiteral(next)
            default: result += escapedLikeLiteral(scalar)
            }
        }
        return result
    }

    private static func escapedLikeLiteral(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "%", "_", "\\": "\\" + String(scalar)
        default: String(scalar)
        }
    }
}
