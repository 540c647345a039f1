import Foundation
import Strata

/// Where a PostgreSQL store lives and how to reach it: server, credentials, TLS, connection
/// pool, and the schema (PostgreSQL namespace) that holds the store's tables.
///
/// Make one from a connection URL, as `psql` and libpq take them, or from its fields:
///
/// ```swift
/// let configuration = try PostgresConfiguration(
///     url: "postgres://app:secret@db.internal:5432/movies?sslmode=verify-full&schema=catalog")
/// var local = PostgresConfiguration(host: "127.0.0.1", username: "app", password: "secret", database: "movies")
/// local.pool.maximumConnections = 16
/// ```
///
/// Several Strata models can share one database, each in its own ``schemaName``. The password
/// never appears in ``description``, in errors or in logs.
public struct PostgresConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// How the connection uses TLS, as libpq's `sslmode` says it.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, without checking its certificate (libpq's `prefer`
        /// and `allow`).
        case prefer
        /// TLS required, the certificate not checked (libpq's `require`).
        case require
        /// TLS required, the certificate checked against the trusted roots, not the host name.
        case verifyCA = "verify-ca"
        /// TLS required, the certificate and the host name checked: the mode for untrusted
        /// networks.
        case verifyFull = "verify-full"
    }

    /// The connection pool of one store.
    public struct Pool: Sendable, Hashable {
        /// The most connections the store opens at once. Requests beyond it wait for a free
        /// connection. Default 8.
        public var maximumConnections: Int = 8
        /// How long opening one connection may take before it fails. Default 10 seconds.
        public var connectTimeout: Duration = .seconds(10)
        /// How long a request waits for a free connection before it fails with
        /// ``StrataError/Code/poolExhausted``. Default 30 seconds.
        public var acquireTimeout: Duration = .seconds(30)

        /// Pool options; the defaults suit an app server with a few dozen concurrent requests.
        ///
        /// For example:
        ///
        /// ```swift
        /// var configuration = try PostgresConfiguration(url: "postgres://app@db.internal/movies")
        /// configuration.pool = .init(maximumConnections: 32, acquireTimeout: .seconds(5))   // fail fast under load
        /// ```
        public init(maximumConnections: Int = 8, connectTimeout: Duration = .seconds(10), acquireTimeout: Duration = .seconds(30)) {
            self.maximumConnections = maximumConnections
            self.connectTimeout = connectTimeout
            self.acquireTimeout = acquireTimeout
        }
    }

    /// The server's host name or IP address.
    public var host: String
    /// The server's port. Default 5432.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The password; never shown in ``description``, errors or logs.
    public var password: String?
    /// The database.
    public var database: String
    /// The PostgreSQL schema (namespace) that holds the store's tables, created when missing.
    /// Default `public`.
    public var schemaName: String
    /// How the connection uses TLS. Default ``TLSMode/prefer``.
    public var tlsMode: TLSMode
    /// A PEM file of certificate authorities to trust instead of the system's, for
    /// ``TLSMode/verifyCA`` and ``TLSMode/verifyFull`` (libpq's `sslrootcert`).
    public var rootCertificatePath: String?
    /// The connection pool.
    public var pool: Pool
    /// The name the server shows for the store's connections (`application_name`). Default
    /// `strata`.
    public var applicationName: String

    /// A configuration from its fields.
    ///
    /// For example:
    ///
    /// ```swift
    /// let configuration = PostgresConfiguration(
    ///     host: "db.internal", username: "app", password: ProcessInfo.processInfo.environment["PGPASSWORD"],
    ///     database: "movies", schemaName: "catalog", tlsMode: .verifyFull)
    /// ```
    public init(
        host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
        schemaName: String = "public", tlsMode: TLSMode = .prefer, pool: Pool = Pool(), applicationName: String = "strata"
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schemaName = schemaName
        self.tlsMode = tlsMode
        self.rootCertificatePath = nil
        self.pool = pool
        self.applicationName = applicationName
    }

    /// A configuration from a connection URL:
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE&schema=NAME`.
    ///
    /// `postgresql://` works too. Query parameters: `sslmode` (`disable`, `allow`, `prefer`,
    /// `require`, `verify-ca`, `verify-full`), `sslrootcert`, `schema` (or libpq's
    /// `options=-csearch_path=NAME`), `pool_size`, `connect_timeout` (seconds),
    /// `application_name`. User and password may be percent-encoded.
    ///
    /// For example:
    ///
    /// ```swift
    /// let configuration = try PostgresConfiguration(
    ///     url: "postgresql://app:s%40cret@db.internal:5432/movies?sslmode=require&schema=catalog&pool_size=16")
    /// configuration.password   // "s@cret"
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidConfiguration`` for a URL
    ///   that is not a PostgreSQL URL or has an unknown or bad parameter. The message never
    ///   repeats the password.
    public init(url string: String) throws {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw StrataError(
                .invalidConfiguration,
                "'\(Self.redacted(string))' is not a PostgreSQL URL; write postgres://USER:PASSWORD@HOST:PORT/DATABASE.")
        }
        guard let host = components.host, !host.isEmpty else {
            throw StrataError(.invalidConfiguration, "The PostgreSQL URL '\(Self.redacted(string))' names no host.")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty else {
            throw StrataError(.invalidConfiguration, "The PostgreSQL URL '\(Self.redacted(string))' names no database.")
        }
        guard let user = components.user, !user.isEmpty else {
            throw StrataError(.invalidConfiguration, "The PostgreSQL URL '\(Self.redacted(string))' names no user.")
        }
        self.init(
            host: host, port: components.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.removingPercentEncoding ?? database)
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": tlsMode = .disable
                case "allow", "prefer": tlsMode = .prefer
                default:
                    guard let mode = TLSMode(rawValue: value) else {
                        throw StrataError(
                            .invalidConfiguration,
                            "Unknown sslmode '\(value)'; use disable, allow, prefer, require, verify-ca or verify-full.")
                    }
                    tlsMode = mode
                }
            case "sslrootcert": rootCertificatePath = value
            case "schema", "search_path": schemaName = value
            case "options":
                // libpq's `options=-csearch_path=NAME`.
                let prefix = "-csearch_path="
                guard value.hasPrefix(prefix), !value.dropFirst(prefix.count).contains(" ") else {
                    throw StrataError(
                        .invalidConfiguration, "Only options=-csearch_path=NAME is understood; use schema=NAME instead.")
                }
                schemaName = String(value.dropFirst(prefix.count))
            case "pool_size", "pool_max":
                guard let size = Int(value), size > 0 else {
                    throw StrataError(.invalidConfiguration, "pool_size must be a positive integer, not '\(value)'.")
                }
                pool.maximumConnections = size
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else {
                    throw StrataError(.invalidConfiguration, "connect_timeout must be a positive number of seconds, not '\(value)'.")
                }
                pool.connectTimeout = .seconds(seconds)
            case "application_name": applicationName = value
            default:
                throw StrataError(
                    .invalidConfiguration,
                    "Unknown PostgreSQL URL parameter '\(item.name)'; Strata understands sslmode, sslrootcert, schema, pool_size, connect_timeout and application_name.")
            }
        }
        guard Self.isValidSchemaName(schemaName) else {
            throw StrataError(
                .invalidConfiguration,
                "'\(schemaName)' cannot name a PostgreSQL schema for Strata; use letters, digits and underscores (at most 63), starting with a letter or underscore.")
        }
    }

    /// Where the store lives, without the password:
    /// `postgres://USER@HOST:PORT/DATABASE?schema=NAME`.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?schema=\(schemaName)"
    }

    /// Whether `name` can be a namespace Strata creates and names in SQL.
    static func isValidSchemaName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63 else { return false }
        let letters = CharacterSet.letters.union(CharacterSet(charactersIn: "_"))
        return letters.contains(first) && name.unicodeScalars.allSatisfy { $0.isASCII && (letters.contains($0) || CharacterSet.decimalDigits.contains($0)) }
    }

    /// A URL with its password replaced by `***`, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else {
            // Not parseable: hide anything between "://" and "@" that looks like user:password.
            guard let at = url.lastIndex(of: "@"), let start = url.range(of: "://")?.upperBound, start < at else { return url }
            return String(url[..<start]) + "***" + String(url[at...])
        }
        components.password = "***"
        return components.string ?? "postgres://***"
    }
}

extension StrataError.Code {
    /// A store's configuration is malformed: a bad connection URL, an unknown parameter, a
    /// schema name that cannot be used.
    public static let invalidConfiguration = Self(rawValue: "invalidConfiguration")
    /// The database server cannot be reached: the host is unknown or refuses connections, the
    /// connection timed out, or TLS could not be set up.
    public static let connectionFailed = Self(rawValue: "connectionFailed")
    /// The server refused the user name or password.
    public static let authenticationFailed = Self(rawValue: "authenticationFailed")
    /// The connection to the server was lost during an operation (a restart, a killed backend,
    /// a network failure). The operation's transaction did not commit; the next operation
    /// connects again.
    public static let connectionLost = Self(rawValue: "connectionLost")
    /// Every connection of the pool stayed busy for the configured acquire timeout.
    public static let poolExhausted = Self(rawValue: "poolExhausted")
}
