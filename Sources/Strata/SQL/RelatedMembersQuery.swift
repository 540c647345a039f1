import Foundation

extension StoreLayout.ToManyStorage {
    /// The query that reads a to-many relationship's members for several owners: rows of
    /// (owner key, member key, member entity), each owner's members in the relationship's order
    /// (ordered relationships by position, then by key).
    ///
    /// - Parameters:
    ///   - destination: The layout of the relationship's destination entity.
    ///   - owners: The condition on the owner column, given the column's SQL: the dialect's
    ///     `IN (?, ?)` or `= ANY($1)`.
    ///   - nullsFirst: What the dialect appends to an ordering term so that NULL comes first:
    ///     nothing in SQLite, where it already does, ` NULLS FIRST` in PostgreSQL.
    package func membersQuery(
        destination: StoreLayout.EntityLayout, owners: (String) -> String, nullsFirst: String = ""
    ) -> String {
        let key = quoted(StoreLayout.primaryKeyColumn)
        let entity = quoted(StoreLayout.entityColumn)
        switch self {
        case .inverseColumn(let table, let column, let orderColumn):
            let kinds = entityNameList(destination.kindNames)
            return "SELECT \(quoted(column)), \(key), \(entity) FROM \(quoted(table))"
                + " WHERE \(owners(quoted(column))) AND \(entity) IN (\(kinds))"
                + " ORDER BY \(quoted(column)), " + (orderColumn.map { "\(quoted($0))\(nullsFirst), " } ?? "") + key
        case .joinTable(let table, let sourceColumn, let targetColumn, let positionColumn):
            return "SELECT j.\(quoted(sourceColumn)), j.\(quoted(targetColumn)), t.\(entity) FROM \(quoted(table)) j"
                + " JOIN \(quoted(destination.table)) t ON t.\(key) = j.\(quoted(targetColumn))"
                + " WHERE \(owners("j.\(quoted(sourceColumn))"))"
                + " ORDER BY j.\(quoted(sourceColumn)), " + (positionColumn.map { "j.\(quoted($0))\(nullsFirst), " } ?? "")
                + "j.\(quoted(targetColumn))"
        }
    }
}
