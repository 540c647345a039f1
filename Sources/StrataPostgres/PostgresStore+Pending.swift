import Foundation
import Strata

// Batch requests and persistent history come next; until then they are refused with a typed error.
extension PostgresStore {
    private func notYet(_ what: String) -> StrataError {
        StrataError(.storeError, "\(what) is not available in PostgreSQL stores yet.")
    }

    public func batchInsert(_ insert: StoreBatchInsert, rows nextRow: (inout [AttributeValue]) throws -> Bool) throws -> BatchResult {
        throw notYet("Batch insert")
    }

    public func batchUpdate(_ update: StoreBatchUpdate) throws -> BatchResult { throw notYet("Batch update") }

    public func batchDelete(_ delete: StoreBatchDelete) throws -> BatchResult { throw notYet("Batch delete") }

    public func fetchHistory(_ request: HistoryFetchRequest) throws -> [HistoryTransaction] {
        throw StrataError(.persistentHistoryUnavailable, "Persistent history is not available in PostgreSQL stores yet.")
    }

    public func deleteHistory(_ request: HistoryDeleteRequest) throws -> Int {
        throw StrataError(.persistentHistoryUnavailable, "Persistent history is not available in PostgreSQL stores yet.")
    }

    public func currentHistoryToken() throws -> HistoryToken? {
        throw StrataError(.persistentHistoryUnavailable, "Persistent history is not available in PostgreSQL stores yet.")
    }

    public func lastMergedHistoryTokens() throws -> [String: HistoryToken] {
        throw StrataError(.persistentHistoryUnavailable, "Persistent history is not available in PostgreSQL stores yet.")
    }

    public func setLastMergedHistoryToken(_ token: HistoryToken?, forAuthor author: String) throws {
        throw StrataError(.persistentHistoryUnavailable, "Persistent history is not available in PostgreSQL stores yet.")
    }
}
