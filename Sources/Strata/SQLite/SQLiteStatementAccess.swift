import Foundation
import GRDB
import GRDBSQLite

// The per-row paths of the SQLite store (saves and fetches) bind and read values through the
// SQLite C API on statements GRDB prepared and caches. Going through `StatementArguments`,
// `DatabaseValue` and `Row` costs several allocations per value; these helpers cost none for
// numbers and one copy for text and bytes. The encoding is `SQLiteValueCoding`'s.

/// SQLite copies the bytes of a value bound with this destructor before the call returns.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement whose parameters are bound one value at a time, then stepped.
struct StatementBinder {
    let statement: Statement
    let handle: SQLiteStatement
    let database: Database
    /// The statement's SQL (GRDB's `Statement.sql` recomputes it on each call).
    let sql: String

    init(_ statement: Statement, sql: String, in database: Database) {
        self.statement = statement
        self.handle = statement.sqliteStatement
        self.database = database
        self.sql = sql
    }

    /// Resets the statement so it can be bound and run again.
    func reset() {
        sqlite3_reset(handle)
    }

    /// Releases the values bound to the statement (a cached statement keeps them otherwise).
    func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Binds `value` to the parameter at `index` (1-based).
    func bind(_ value: AttributeValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
        case .double(let number): code = sqlite3_bind_double(handle, index, number)
        case .float(let number): code = sqlite3_bind_double(handle, index, Double(number))
        case .decimal(let number): code = bindText(number.description, at: index)
        case .string(let text): code = bindText(text, at: index)
        case .boolean(let flag): code = sqlite3_bind_int64(handle, index, flag ? 1 : 0)
        case .date(let date): code = sqlite3_bind_double(handle, index, date.timeIntervalSinceReferenceDate)
        case .data(let data): code = bindBlob(data, at: index)
        case .uuid(let uuid):
            code = withUnsafeBytes(of: uuid.uuid) { bytes in
                sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transientDestructor)
            }
        case .url(let url): code = bindText(url.absoluteString, at: index)
        case .codable(let json):
            code = json.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, transientDestructor) }
                return sqlite3_bind_text64(
                    handle, index, base.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), transientDestructor,
                    UInt8(SQLITE_UTF8))
            }
        }
        try check(code)
    }

    /// Binds a GRDB value to the parameter at `index` (1-based).
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        switch value.storage {
        case .null: try check(sqlite3_bind_null(handle, index))
        case .int64(let number): try check(sqlite3_bind_int64(handle, index, number))
        case .double(let number): try check(sqlite3_bind_double(handle, index, number))
        case .string(let text): try check(bindText(text, at: index))
        case .blob(let data): try check(bindBlob(data, at: index))
        }
    }

    /// Binds an integer to the parameter at `index` (1-based).
    func bind(_ number: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, number))
    }

    /// Binds text to the parameter at `index` (1-based).
    func bind(_ text: String, at index: Int32) throws {
        try check(bindText(text, at: index))
    }

    /// Runs the statement to completion (it returns no rows) and resets it.
    func execute() throws {
        defer { sqlite3_reset(handle) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw currentError(code) }
    }

    /// Runs a statement whose `RETURNING` clause gives one integer per row (a key), and returns
    /// them.
    func returnedKeys() throws -> [Int64] {
        defer { sqlite3_reset(handle) }
        var keys: [Int64] = []
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            keys.append(sqlite3_column_int64(handle, 0))
            code = sqlite3_step(handle)
        }
        guard code == SQLITE_DONE else { throw currentError(code) }
        return keys
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, transientDestructor) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), transientDestructor, UInt8(SQLITE_UTF8))
            }
        }
    }

    private func bindBlob(_ data: Data, at index: Int32) -> Int32 {
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), transientDestructor)
        }
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw currentError(code) }
    }

    /// The connection's current error (with its extended code), as GRDB would report it.
    func currentError(_ code: Int32) -> DatabaseError {
        let extended = database.sqliteConnection.map { sqlite3_extended_errcode($0) } ?? code
        return DatabaseError(resultCode: ResultCode(rawValue: extended), message: database.lastErrorMessage, sql: sql)
    }
}

/// Steps through the rows of a prepared statement and reads their columns by index.
///
/// Reading never traps: a column of an unexpected kind (a file another program wrote) reads as
/// `nil` or ``AttributeValue/null``.
package struct StatementRows: SQLRowReading {
    let statement: Statement
    let handle: SQLiteStatement
    let database: Database
    let sql: String

    /// Prepares `sql` (through GRDB's statement cache) with `values` bound to its parameters
    /// in order. Binding them directly matters for long `IN (...)` lists of keys.
    init(_ database: Database, sql: String, values: [DatabaseValue]) throws {
        self.sql = sql
        statement = try database.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        self.database = database
        let binder = StatementBinder(statement, sql: sql, in: database)
        binder.reset()
        guard values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(values.count)", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            try binder.bind(value, at: Int32(offset + 1))
        }
    }

    /// Calls `body` for each row, then resets the statement (ending its read).
    func forEach(_ body: (StatementRows) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                let extended = database.sqliteConnection.map { sqlite3_extended_errcode($0) } ?? code
                throw DatabaseError(resultCode: ResultCode(rawValue: extended), message: database.lastErrorMessage, sql: sql)
            }
            try body(self)
        }
    }

    /// The integer in a column of the current row, or `nil` for NULL or another kind of value.
    func int64(at column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_INTEGER ? sqlite3_column_int64(handle, column) : nil
    }

    /// The text in a column of the current row, or `nil` for NULL or another kind of value.
    func string(at column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return nil }
        return text(at: column)
    }

    /// Whether a column of the current row holds exactly `text`, compared without making a string.
    func hasText(_ text: String, at column: Int32) -> Bool {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT, let pointer = sqlite3_column_text(handle, column) else {
            return false
        }
        let count = Int(sqlite3_column_bytes(handle, column))
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count == count else { return false }
            guard let base = bytes.baseAddress, count > 0 else { return true }
            return memcmp(base, pointer, count) == 0
        }
    }

    /// The one of `names` that a column of the current row holds, or `nil` when it holds
    /// another value. Compared in place, so no string is made per row.
    func entityName(at column: Int32, among names: [String]) -> String? {
        names.first { hasText($0, at: column) }
    }

    /// A column of the current row decoded as an attribute of `type`.
    func attributeValue(at column: Int32, type: AttributeType) -> AttributeValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return SQLiteValueCoding.attributeValue(integer: sqlite3_column_int64(handle, column), type: type)
        case SQLITE_FLOAT:
            return SQLiteValueCoding.attributeValue(double: sqlite3_column_double(handle, column), type: type)
        case SQLITE_TEXT:
            return SQLiteValueCoding.attributeValue(text: text(at: column), type: type)
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let pointer = sqlite3_column_blob(handle, column), count > 0 else {
                return SQLiteValueCoding.attributeValue(blob: Data(), type: type)
            }
            if type == .uuid {
                guard count == 16 else { return .null }
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: 16)) }
                return .uuid(UUID(uuid: uuid))
            }
            return SQLiteValueCoding.attributeValue(blob: Data(bytes: pointer, count: count), type: type)
        default:
            return .null
        }
    }

    package func int64(at column: Int) -> Int64? { int64(at: Int32(column)) }

    package func entityName(at column: Int, among names: [String]) -> String? { entityName(at: Int32(column), among: names) }

    package func attributeValue(at column: Int, type: AttributeType) -> AttributeValue {
        attributeValue(at: Int32(column), type: type)
    }

    /// `SUM`'s integer, or the `REAL` `strata_integer_sum` gives beyond `Int64`'s range.
    package func integerSum(at column: Int) -> AttributeValue {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_FLOAT
            ? .double(sqlite3_column_double(handle, Int32(column))) : attributeValue(at: Int32(column), type: .integer64)
    }

    private func text(at column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
}
