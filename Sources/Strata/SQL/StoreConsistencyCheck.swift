import Foundation

/// What a consistency check needs of a store's database, in either SQL dialect.
package protocol ConsistencyCheckDatabase {
    /// The placeholder of the `number`th bound value (from 1): `?` or `$1`.
    func placeholder(_ number: Int) -> String
    /// The integers in the first column of the rows `sql` returns, `arguments` bound.
    func integers(_ sql: String, _ arguments: [AttributeValue]) throws -> [Int64]
    /// Runs one statement; returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int
    /// The names of `table`'s columns; empty when there is no such table.
    func columnNames(ofTable table: String) throws -> [String]
    /// What the database's own integrity check reports (empty when it finds nothing).
    func integrityProblems() throws -> [String]
}

/// Checks (and repairs) a store's rows against its layout, with the same SQL for every store:
/// missing tables and columns, to-one keys of objects that do not exist, join rows that name
/// objects that do not exist, broken uniqueness constraints and missing required values.
package struct StoreConsistencyCheck {
    let schema: Schema
    let layout: StoreLayout
    /// The columns each table must have, by table name.
    let tables: [(name: String, columns: [String])]

    package init(schema: Schema, layout: StoreLayout, tables: [(name: String, columns: [String])]) {
        self.schema = schema
        self.layout = layout
        self.tables = tables
    }

    /// One check: its problem, the condition that picks the rows, and how to repair them.
    private struct Finding {
        var problem: StoreConsistencyProblem
        var repair: (sql: String, arguments: [AttributeValue])?
    }

    /// Every problem, in a stable order.
    package func problems(in database: some ConsistencyCheckDatabase) throws -> [StoreConsistencyProblem] {
        try findings(in: database).map(\.problem)
    }

    /// Repairs what can be repaired (inside the caller's write transaction); returns what was
    /// repaired, with the counts of rows changed.
    package func repair(in database: some ConsistencyCheckDatabase) throws -> [StoreConsistencyProblem] {
        var repaired: [StoreConsistencyProblem] = []
        for finding in try findings(in: database) {
            guard finding.problem.isRepairable, let repair = finding.repair else { continue }
            var problem = finding.problem
            problem.count = try database.execute(repair.sql, repair.arguments)
            repaired.append(problem)
        }
        return repaired
    }

    private func findings(in database: some ConsistencyCheckDatabase) throws -> [Finding] {
        var findings: [Finding] = []
        for message in try database.integrityProblems() {
            findings.append(
                Finding(problem: StoreConsistencyProblem(kind: .integrity, count: 1, message: message, isRepairable: false)))
        }
        var missingTables: Set<String> = []
        for table in tables {
            let present = Set(try database.columnNames(ofTable: table.name))
            if present.isEmpty {
                missingTables.insert(table.name)
                findings.append(
                    Finding(
                        problem: StoreConsistencyProblem(
                            kind: .schemaMismatch, entityName: table.name, count: 1,
                            message: "The table \(table.name) that the recorded schema needs is missing.", isRepairable: false)))
                continue
            }
            for column in table.columns where !present.contains(column) {
                missingTables.insert(table.name)
                findings.append(
                    Finding(
                        problem: StoreConsistencyProblem(
                            kind: .schemaMismatch, entityName: table.name, propertyName: column, count: 1,
                            message: "The table \(table.name) has no column \(column), which the recorded schema needs.",
                            isRepairable: false)))
            }
        }
        // Row checks need the tables they read.
        for entity in schema.entities.sorted(by: { $0.name < $1.name }) {
            guard let entityLayout = layout.entities[entity.name], !missingTables.contains(entityLayout.table) else { continue }
            findings += try requiredValues(of: entity, entityLayout, in: database)
            findings += try danglingToOne(of: entity, entityLayout, in: database, missingTables: missingTables)
            findings += try orphanedJoinRows(of: entity, entityLayout, in: database, missingTables: missingTables)
            findings += try uniquenessViolations(of: entity, entityLayout, in: database)
        }
        return findings
    }

    /// `"_entity" IN (…)` for `kinds`, with placeholders from `first`.
    private func kindCondition(
        _ alias: String, _ kinds: [String], from first: Int, in database: some ConsistencyCheckDatabase
    ) -> (sql: String, arguments: [AttributeValue]) {
        let placeholders = kinds.indices.map { database.placeholder(first + $0) }.joined(separator: ", ")
        return ("\(alias).\(quoted(StoreLayout.entityColumn)) IN (\(placeholders))", kinds.map { .string($0) })
    }

    private func count(_ sql: String, _ arguments: [AttributeValue], in database: some ConsistencyCheckDatabase) throws -> Int {
        Int(try database.integers(sql, arguments).first ?? 0)
    }

    private func requiredValues(
        of entity: Entity, _ entityLayout: StoreLayout.EntityLayout, in database: some ConsistencyCheckDatabase
    ) throws -> [Finding] {
        var findings: [Finding] = []
        let own = Set(entity.declaration.attributes.map(\.name))
        for (number, attribute) in entity.attributes.enumerated()
        where own.contains(attribute.name) && !attribute.isOptional && !attribute.isTransient {
            guard let column = entityLayout.attributeColumns[number] else { continue }
            let kinds = kindCondition("t", entityLayout.kindNames, from: 1, in: database)
            let found = try count(
                "SELECT COUNT(*) FROM \(quoted(entityLayout.table)) t WHERE \(kinds.sql) AND t.\(quoted(column)) IS NULL",
                kinds.arguments, in: database)
            guard found > 0 else { continue }
            findings.append(
                Finding(
                    problem: StoreConsistencyProblem(
                        kind: .missingRequiredValue, entityName: entity.name, propertyName: attribute.name, count: found,
                        message: "\(entity.name).\(attribute.name): \(found) object\(found == 1 ? " has" : "s have") no value for this required attribute.",
                        isRepairable: false)))
        }
        return findings
    }

    private func danglingToOne(
        of entity: Entity, _ entityLayout: StoreLayout.EntityLayout, in database: some ConsistencyCheckDatabase,
        missingTables: Set<String>
    ) throws -> [Finding] {
        var findings: [Finding] = []
        for (number, relationship) in entity.relationships.enumerated() where !relationship.isToMany {
            guard StoreLayout.declaringEntity(ofRelationship: relationship.name, in: entity) === entity,
                let column = entityLayout.toOneColumns[number],
                let destination = layout.entities[relationship.destinationEntityName],
                !missingTables.contains(destination.table)
            else { continue }
            let kinds = kindCondition("t", entityLayout.kindNames, from: 1, in: database)
            let targets = kindCondition("d", destination.kindNames, from: 1 + kinds.arguments.count, in: database)
            let condition =
                "\(kinds.sql) AND t.\(quoted(column)) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(quoted(destination.table)) d WHERE d.\(quoted(StoreLayout.primaryKeyColumn)) = t.\(quoted(column)) AND \(targets.sql))"
            let arguments = kinds.arguments + targets.arguments
            let found = try count("SELECT COUNT(*) FROM \(quoted(entityLayout.table)) t WHERE \(condition)", arguments, in: database)
            guard found > 0 else { continue }
            var assignments = ["\(quoted(column)) = NULL"]
            if let entityColumn = entityLayout.toOneEntityColumns[number] { assignments.append("\(quoted(entityColumn)) = NULL") }
            // UPDATE … t: both dialects accept an alias on the updated table.
            let repair =
                "UPDATE \(quoted(entityLayout.table)) AS t SET \(assignments.joined(separator: ", ")) WHERE \(condition)"
            findings.append(
                Finding(
                    problem: StoreConsistencyProblem(
                        kind: .danglingToOne, entityName: entity.name, propertyName: relationship.name, count: found,
                        message:
                            "\(entity.name).\(relationship.name): \(found) object\(found == 1 ? " holds" : "s hold") the key of a \(relationship.destinationEntityName) that does not exist"
                            + (relationship.isOptional ? "." : "; the relationship is required, so a person must choose its new value."),
                        isRepairable: relationship.isOptional),
                    repair: (repair, arguments)))
        }
        return findings
    }

    private func orphanedJoinRows(
        of entity: Entity, _ entityLayout: StoreLayout.EntityLayout, in database: some ConsistencyCheckDatabase,
        missingTables: Set<String>
    ) throws -> [Finding] {
        var findings: [Finding] = []
        for (number, relationship) in entity.relationships.enumerated() where relationship.isToMany {
            guard StoreLayout.declaringEntity(ofRelationship: relationship.name, in: entity) === entity,
                case .joinTable(let table, let source, let target, _)? = entityLayout.toMany[number],
                // Each join table is checked once, from the side whose key is its source column.
                source == StoreLayout.joinSourceColumn,
                let destination = layout.entities[relationship.destinationEntityName],
                !missingTables.contains(table), !missingTables.contains(destination.table)
            else { continue }
            let key = quoted(StoreLayout.primaryKeyColumn)
            let condition =
                "NOT EXISTS (SELECT 1 FROM \(quoted(entityLayout.table)) s WHERE s.\(key) = j.\(quoted(source))) OR NOT EXISTS (SELECT 1 FROM \(quoted(destination.table)) d WHERE d.\(key) = j.\(quoted(target)))"
            let found = try count("SELECT COUNT(*) FROM \(quoted(table)) j WHERE \(condition)", [], in: database)
            guard found > 0 else { continue }
            findings.append(
                Finding(
                    problem: StoreConsistencyProblem(
                        kind: .orphanedJoinRows, entityName: entity.name, propertyName: relationship.name, count: found,
                        message:
                            "\(entity.name).\(relationship.name): \(found) link\(found == 1 ? "" : "s") in \(table) name\(found == 1 ? "s" : "") an object that does not exist.",
                        isRepairable: true),
                    repair: ("DELETE FROM \(quoted(table)) AS j WHERE \(condition)", [])))
        }
        return findings
    }

    private func uniquenessViolations(
        of entity: Entity, _ entityLayout: StoreLayout.EntityLayout, in database: some ConsistencyCheckDatabase
    ) throws -> [Finding] {
        var findings: [Finding] = []
        for constraint in entity.declaration.uniquenessConstraints {
            var columns: [String] = []
            for name in constraint {
                if let number = entity.attributeNumber(named: name), let column = entityLayout.attributeColumns[number] {
                    columns.append(column)
                } else if let number = entity.relationshipNumber(named: name), let column = entityLayout.toOneColumns[number] {
                    columns.append(column)
                }
            }
            guard columns.count == constraint.count else { continue }
            let kinds = kindCondition("t", entityLayout.kindNames, from: 1, in: database)
            let terms = columns.map { "t.\(quoted($0))" }
            let found = try count(
                "SELECT COUNT(*) FROM (SELECT 1 AS one FROM \(quoted(entityLayout.table)) t WHERE \(kinds.sql) AND "
                    + terms.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
                    + " GROUP BY \(terms.joined(separator: ", ")) HAVING COUNT(*) > 1) duplicates",
                kinds.arguments, in: database)
            guard found > 0 else { continue }
            let names = constraint.joined(separator: ", ")
            findings.append(
                Finding(
                    problem: StoreConsistencyProblem(
                        kind: .uniquenessViolation, entityName: entity.name, propertyName: names, count: found,
                        message:
                            "\(entity.name) (\(names)): \(found) value\(found == 1 ? " is" : "s are") shared by several objects, which the uniqueness constraint forbids.",
                        isRepairable: false)))
        }
        return findings
    }
}
