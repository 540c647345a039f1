import Foundation
import GRDB

extension SQLiteStore {
    /// Rows per INSERT statement of a batch insert (fewer when the columns would pass the
    /// connection's parameter limit).
    static let batchInsertRowsPerStatement = 128

    public func batchInsert(_ request: StoreBatchInsert, rows nextRow: (inout [AttributeValue]) throws -> Bool) throws
        -> BatchResult
    {
        let (entity, layout) = try resolve(request.entityName)
        guard !entity.declaration.isAbstract else {
            throw StrataError(
                .abstractEntity, "\(entity.name) is abstract; batch-insert rows of one of its subentities.",
                entityName: entity.name)
        }
        let attributeNumbers = layout.attributeColumns.indices.filter { layout.attributeColumns[$0] != nil }
        let columns =
            [StoreLayout.entityColumn, StoreLayout.versionColumn, StoreLayout.primaryKeyColumn]
            + attributeNumbers.compactMap { layout.attributeColumns[$0] }
        var conflictClause = ""
        switch request.conflictResolution {
        case .fail: break
        case .keepStored: conflictClause = " ON CONFLICT DO NOTHING"
        case .replaceStored:
            conflictClause =
                " ON CONFLICT DO UPDATE SET "
                + (attributeNumbers.compactMap { layout.attributeColumns[$0] }.map { "\(quoted($0)) = excluded.\(quoted($0))" }
                    + ["\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1"])
                .joined(separator: ", ")
                // A stored object of another entity (a parent's constraint covers its
                // subentities) cannot become this one: it is kept, as under keepStored.
                + " WHERE \(quoted(StoreLayout.entityColumn)) = excluded.\(quoted(StoreLayout.entityColumn))"
        }
        // Which rows were written, and how, is known from the keys assigned unless a conflict
        // can be resolved: then the statement reports the rows it wrote (a stored row that took
        // a row's values keeps its own key, below every key the request assigns).
        let returning =
            request.conflictResolution == .fail
            ? "" : " RETURNING \(quoted(StoreLayout.primaryKeyColumn))"
        return try runBatch(author: request.author, contextName: request.contextName) { db in
            let limit = db.maximumStatementArgumentCount
            var rowsPerStatement = Self.batchInsertRowsPerStatement
            while rowsPerStatement > 1 && rowsPerStatement * (columns.count - 2) > limit { rowsPerStatement /= 2 }
            // The entity and the first version are the same in every row: SQL constants (the
            // entity's name comes from the schema, quoted as a string), not parameters.
            let entityLiteral = "'" + entity.name.replacingOccurrences(of: "'", with: "''") + "'"
            let row = "(\(entityLiteral), \(StoreLayout.initialVersion), " + columns.dropFirst(2).map { _ in "?" }.joined(separator: ", ") + ")"
            func statement(rows: Int) throws -> StatementBinder {
                let sql =
                    "INSERT INTO \(quoted(layout.table)) (" + columns.map(quoted).joined(separator: ", ") + ") VALUES "
                    + Array(repeating: row, count: rows).joined(separator: ", ") + conflictClause + returning
                return StatementBinder(try db.cachedStatement(sql: sql), sql: sql, in: db)
            }
            let full = try statement(rows: rowsPerStatement)
            var nextKey = try Self.highestKeyEverUsed(in: layout.table, db: db)
            // Keys above this one are the rows this request added; a stored row that took a
            // row's values keeps its own, lower key.
            let highestStoredKey = nextKey
            var inserted: [Int64] = []
            // The new rows' keys, when rows may take each other's place (upserts).
            var newKeys: Set<Int64> = []
            var updated: [Int64] = []
            var values = entity.defaultValues
            // The rows of the statement being filled: their keys and attribute values.
            var chunkKeys: [Int64] = []
            chunkKeys.reserveCapacity(rowsPerStatement)
            var chunkValues: [AttributeValue] = []
            chunkValues.reserveCapacity(rowsPerStatement * attributeNumbers.count)
            // Every parameter is bound again for each statement; bindings are cleared once, at
            // the end, so that the cached statements keep no value.
            defer { full.clearBindings() }
            func write(_ statement: StatementBinder) throws {
                var index: Int32 = 1
                var value = 0
                for key in chunkKeys {
                    try statement.bind(key, at: index)
                    index += 1
                    for _ in attributeNumbers {
                        try statement.bind(chunkValues[value], at: index)
                        value += 1
                        index += 1
                    }
                }
                if returning.isEmpty {
                    try statement.execute()
                    inserted += chunkKeys
                } else {
                    for key in try statement.returnedKeys() {
                        if key <= highestStoredKey {
                            updated.append(key)
                        } else if newKeys.insert(key).inserted {
                            // (A later row of the request may take an earlier one's place: the
                            // object is still one new object.)
                            inserted.append(key)
                        }
                    }
                }
                chunkKeys.removeAll(keepingCapacity: true)
                chunkValues.removeAll(keepingCapacity: true)
            }
            while try nextRow(&values) {
                guard nextKey < Int64.max else {
                    throw StrataError(
                        .storeError, "\(layout.table) has used every primary key up to \(Int64.max).",
                        entityName: entity.name, fileURL: url)
                }
                nextKey += 1
                chunkKeys.append(nextKey)
                for number in attributeNumbers { chunkValues.append(number < values.count ? values[number] : .null) }
                if chunkKeys.count == rowsPerStatement { try write(full) }
            }
            if !chunkKeys.isEmpty {
                let tail = try statement(rows: chunkKeys.count)
                defer { tail.clearBindings() }
                try write(tail)
            }
            if !updated.isEmpty {
                // Each stored object counts once, however many rows took its place.
                var seen: Set<Int64> = []
                updated = updated.filter { seen.insert($0).inserted }
            }
            var changes = BatchChanges()
            changes.inserted = [(entity.name, inserted)]
            let written = attributeNumbers.map { entity.attributes[$0].name }.sorted()
            changes.updated = updated.map { (RowReference(entity: entity.name, key: $0), written) }
            let count = inserted.count + updated.count
            let result = BatchResult(
                kind: .insert, resultType: request.resultType, count: count,
                objectIDs: request.resultType == .objectIDs ? objectIDs(entity.name, inserted + updated) : nil)
            return (changes, result)
        }
    }
}
