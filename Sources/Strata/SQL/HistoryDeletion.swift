import Foundation

/// The statements that delete persistent history before a request's token or date, the same in
/// every SQL store: the tombstones of the transactions' changes, then the changes, then the
/// transactions. A store runs them in order in one transaction, with ``arguments`` bound to
/// each; the last one's count of deleted rows is the number of transactions deleted.
package struct HistoryDeletion<Dialect: SQLDialect> {
    /// The three statements, in the order they run.
    package let statements: [String]
    /// The values every statement binds (the token's number and the date, as asked).
    package let arguments: Dialect.Arguments

    /// The statements for `request`, binding its values after those in `arguments` (empty).
    package init(_ request: HistoryDeleteRequest, arguments: Dialect.Arguments) {
        var arguments = arguments
        var conditions: [String] = []
        if let token = request.token {
            conditions.append("\"number\" < " + Dialect.bind(.integer(token.transactionNumber), as: .integer, to: &arguments))
        }
        if let date = request.date {
            // History stores times as seconds since the reference date.
            conditions.append(
                "\"timestamp\" < " + Dialect.bind(.double(date.timeIntervalSinceReferenceDate), as: .double, to: &arguments))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let selected = "SELECT \"number\" FROM \(quoted(StoreLayout.historyTransactionTable))\(filter)"
        statements = [
            """
            DELETE FROM \(quoted(StoreLayout.historyTombstoneTable)) WHERE "change_id" IN (
            SELECT "id" FROM \(quoted(StoreLayout.historyChangeTable)) WHERE "transaction_number" IN (\(selected)))
            """,
            "DELETE FROM \(quoted(StoreLayout.historyChangeTable)) WHERE \"transaction_number\" IN (\(selected))",
            "DELETE FROM \(quoted(StoreLayout.historyTransactionTable))\(filter)",
        ]
        self.arguments = arguments
    }
}
