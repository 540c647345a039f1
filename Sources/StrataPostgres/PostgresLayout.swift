import Foundation
import Strata

/// The PostgreSQL tables of a schema: the same layout as the SQLite store (one table per root
/// entity with an entity column, foreign-key columns, join tables, order columns, the same
/// index names), with PostgreSQL's column types, a key sequence per entity table and the
/// store's own tables.
struct PostgresLayout: Sendable {
    let base: StoreLayout
    /// Each table's columns with their PostgreSQL types, in creation order.
    let tables: [(name: String, columns: [(name: String, type: String)], isJoinTable: Bool)]
    /// Column types by table and column, for decoding.
    let attributeTypes: [String: [String: AttributeType]]

    /// The metadata table: store identifier, serialized schema, version hash, format.
    static let metadataTable = StoreLayout.metadataTable
    /// The format of PostgreSQL stores, recorded in their metadata.
    static let format = "pg-1"
    /// The most bytes PostgreSQL keeps of an identifier; longer ones are cut, which could make
    /// two names one.
    static let maximumIdentifierLength = 63

    /// The sequence that gives keys to a table's rows.
    static func keySequence(of table: String) -> String { table + ".pk" }

    init(schema: Schema) throws {
        let base = StoreLayout(schema: schema)
        self.base = base
        var types: [String: [String: String]] = [:]
        var attributeTypes: [String: [String: AttributeType]] = [:]
        var problems: [StrataError] = []
        func set(_ table: String, _ column: String, _ type: String, attribute: AttributeType? = nil) {
            if let existing = types[table]?[column], existing != type {
                problems.append(
                    StrataError(
                        .invalidSchema,
                        "Entities stored in table \(table) declare '\(column)' with two types (\(existing) and \(type)); a PostgreSQL column has one type. Rename one of them.",
                        entityName: table, propertyName: column))
                return
            }
            types[table, default: [:]][column] = type
            if let attribute { attributeTypes[table, default: [:]][column] = attribute }
        }
        for entity in schema.entities {
            guard let layout = base.entities[entity.name] else { continue }
            for (number, column) in layout.attributeColumns.enumerated() {
                guard let column else { continue }
                let type = entity.attributes[number].type
                set(layout.table, column, PostgresValueCoding.columnType(type), attribute: type)
            }
            for column in layout.toOneColumns.compactMap({ $0 }) { set(layout.table, column, "bigint") }
            for column in layout.toOneEntityColumns.compactMap({ $0 }) { set(layout.table, column, "text COLLATE \"C\"") }
            for storage in layout.toMany {
                if case .inverseColumn(let table, _, let orderColumn?) = storage { set(table, orderColumn, "bigint") }
            }
        }
        var tables: [(name: String, columns: [(name: String, type: String)], isJoinTable: Bool)] = []
        for table in base.tables {
            var columns: [(name: String, type: String)] = []
            for column in table.columns {
                let type: String
                switch column.name {
                case StoreLayout.primaryKeyColumn where !table.isJoinTable: type = "bigint PRIMARY KEY"
                case StoreLayout.entityColumn where !table.isJoinTable: type = "text COLLATE \"C\" NOT NULL"
                case StoreLayout.versionColumn where !table.isJoinTable: type = "bigint NOT NULL DEFAULT 1"
                case StoreLayout.joinSourceColumn where table.isJoinTable, StoreLayout.joinTargetColumn where table.isJoinTable:
                    type = "bigint NOT NULL"
                case StoreLayout.joinPositionColumn where table.isJoinTable,
                    StoreLayout.joinInversePositionColumn where table.isJoinTable:
                    type = "bigint"
                default: type = types[table.name]?[column.name] ?? "bigint"
                }
                columns.append((column.name, type))
            }
            tables.append((table.name, columns, table.isJoinTable))
        }
        let names = tables.map(\.name) + base.indexes.map(\.name) + tables.filter { !$0.isJoinTable }.map { Self.keySequence(of: $0.name) }
            + tables.flatMap { $0.columns.map(\.name) }
        for name in Set(names) where name.utf8.count > Self.maximumIdentifierLength {
            problems.append(
                StrataError(
                    .invalidSchema,
                    "'\(name)' is \(name.utf8.count) bytes long; PostgreSQL keeps \(Self.maximumIdentifierLength) bytes of a name. Shorten the entity, property or index name it comes from."))
        }
        if !problems.isEmpty {
            throw StrataError(
                .invalidSchema, "The schema cannot be stored in PostgreSQL: \(problems.map(\.message).joined(separator: " "))",
                details: problems)
        }
        self.tables = tables
        self.attributeTypes = attributeTypes
    }

    /// The statements that create the store's tables, sequences and indexes in the current
    /// schema (`search_path`), and its metadata table.
    var creationStatements: [String] {
        var statements = [
            "CREATE TABLE \(quoted(Self.metadataTable)) (key text COLLATE \"C\" PRIMARY KEY, value bytea NOT NULL)"
        ]
        for table in tables { statements += creationStatements(ofTable: table.name) }
        // The same statements as SQLite's: `CREATE [UNIQUE] INDEX "name" ON "table"(cols) [WHERE ...]`.
        for index in base.indexes { statements += [index.sql, Self.recordingStatement(of: index)] }
        return statements
    }

    /// The statements that create one table (and the sequence of its keys).
    func creationStatements(ofTable name: String) -> [String] {
        guard let table = tables.first(where: { $0.name == name }) else { return [] }
        var statements = [
            "CREATE TABLE \(quoted(table.name)) (" + table.columns.map { "\(quoted($0.name)) \($0.type)" }.joined(separator: ", ") + ")"
        ]
        if !table.isJoinTable { statements.append("CREATE SEQUENCE \(quoted(Self.keySequence(of: table.name))) AS bigint") }
        return statements
    }

    /// Records the statement that made an index as its comment, so that a migration can tell
    /// whether the index is the one a new layout wants (PostgreSQL keeps only a normalized
    /// definition).
    static func recordingStatement(of index: StoreLayout.Index) -> String {
        "COMMENT ON INDEX \(quoted(index.name)) IS '" + index.sql.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
