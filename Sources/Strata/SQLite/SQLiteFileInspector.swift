import Foundation
import GRDB
import GRDBSQLite

/// A read-only look into an SQLite file through the C API, for deciding whether a file may be
/// opened as a store before anything is written to it.
///
/// GRDB's connections cannot open URI file names, and a read-only SQLite connection to a
/// WAL-mode database creates `-wal` and `-shm` files next to it. Opened with `immutable`, this
/// connection takes no lock and creates no file, so inspecting a file that is then refused
/// leaves its folder as it was. `immutable` ignores journals, so it is only used when there is
/// no WAL content and no journal to account for (see ``SQLiteStore/inspectionMode(for:)``).
final class SQLiteFileInspector {
    /// How the file is opened.
    enum Mode {
        /// Read-only, no locks, no side files: the file has no WAL content and no journal.
        case immutable
        /// Read-only through SQLite's usual locking, reading committed WAL content too.
        case readOnly
        /// Read-write, so that SQLite rolls back a hot journal left by a crash.
        case recovery
    }

    private let connection: OpaquePointer

    /// Opens `url` in `mode`.
    ///
    /// - Throws: `DatabaseError` with SQLite's result code.
    init(url: URL, mode: Mode) throws {
        var query: String
        switch mode {
        case .immutable: query = "?mode=ro&immutable=1"
        case .readOnly: query = "?mode=ro"
        case .recovery: query = "?mode=rw"
        }
        let uri = "file:" + Self.percentEncoded(url.path) + query
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(
            uri, &handle, (mode == .recovery ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_URI, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            sqlite3_close_v2(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 10_000)
        connection = handle
    }

    deinit {
        sqlite3_close_v2(connection)
    }

    /// The rows of `sql`, each column as text, bytes or `nil`; numbers come as their text.
    func rows(_ sql: String) throws -> [[Data?]] {
        var statement: OpaquePointer?
        var code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else { throw currentError(code, sql: sql) }
        var rows: [[Data?]] = []
        while true {
            code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { break }
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    if sqlite3_column_type(statement, column) == SQLITE_NULL { return nil }
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
                    return Data(bytes: bytes, count: count)
                })
        }
        guard code == SQLITE_DONE else { throw currentError(code, sql: sql) }
        return rows
    }

    /// The first column of each row of `sql`, as text.
    func strings(_ sql: String) throws -> [String] {
        try rows(sql).map { $0.first.flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? "" }
    }

    /// The integer `sql` returns (a `PRAGMA` reading one number).
    func integer(_ sql: String) throws -> Int {
        try strings(sql).first.flatMap { Int($0) } ?? 0
    }

    private func currentError(_ code: CInt, sql: String) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
            message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// A path made safe for a `file:` URI: everything but unreserved ASCII and `/` is escaped,
    /// so that `?`, `#` and `%` in folder names stay part of the path.
    static func percentEncoded(_ path: String) -> String {
        var encoded = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
