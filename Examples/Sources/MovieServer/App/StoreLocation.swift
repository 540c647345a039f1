import Foundation
import Logging
import Strata
import StrataPostgres

/// Where the server keeps its movies: an SQLite file, or a PostgreSQL database.
///
/// ```swift
/// let file = try StoreLocation("movies.sqlite")
/// let database = try StoreLocation("postgres://app:secret@127.0.0.1:5432/app?schema=movies")
/// ```
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file (created when missing).
    case sqlite(URL)
    /// A PostgreSQL database, by its connection URL.
    case postgres(url: String)

    /// The location an argument names: a `postgres://` or `postgresql://` URL, or else a file path.
    ///
    /// - Throws: `StrataError` with code `invalidConfiguration` for a malformed PostgreSQL URL.
    public init(_ argument: String) throws {
        if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
            _ = try PostgresConfiguration(url: argument)
            self = .postgres(url: argument)
        } else {
            self = .sqlite(URL(fileURLWithPath: argument))
        }
    }

    /// The store description the container opens.
    ///
    /// - Parameters:
    ///   - remoteChangePollingInterval: For an SQLite file, how often to look for other
    ///     processes' commits, so that live queries see them (PostgreSQL stores hear other
    ///     servers' commits without polling).
    ///   - logger: Where a PostgreSQL store logs connection events and failures.
    /// - Throws: `StrataError` for a malformed PostgreSQL URL.
    public func storeDescription(remoteChangePollingInterval: Duration?, logger: Logger) throws -> StoreDescription {
        switch self {
        case .sqlite(let url):
            return .sqlite(url, remoteChangePollingInterval: remoteChangePollingInterval)
        case .postgres(let url):
            return try .postgres(url: url, logger: logger)
        }
    }

    /// The kind of store, for `GET /health`: `sqlite` or `postgresql`.
    public var kind: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }

    /// The file's path, or the database without its password.
    public var description: String {
        switch self {
        case .sqlite(let url):
            return url.path
        case .postgres(let url):
            return (try? PostgresConfiguration(url: url).description) ?? "a PostgreSQL database"
        }
    }
}
