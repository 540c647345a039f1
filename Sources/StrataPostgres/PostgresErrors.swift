import Foundation
import NIOCore
import PostgresNIO
import Strata

/// What the PostgreSQL server said, without the parts that can hold data: its SQLSTATE, its
/// message, and the constraint, table and column it names. (The server's `DETAIL` often
/// repeats values, such as the duplicate key, which can be private; it is left out.)
public struct PostgresServerError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE code, such as `23505` for a unique violation.
    public var sqlState: String
    /// The server's primary message.
    public var message: String
    /// The constraint involved, if any.
    public var constraintName: String?

    public var description: String {
        "PostgreSQL error \(sqlState): \(message)" + (constraintName.map { " (constraint \($0))" } ?? "")
    }
}

/// Turns postgres-nio's errors into Strata's typed errors.
enum PostgresErrors {
    /// SQLSTATE codes Strata tells apart.
    enum SQLState {
        static let uniqueViolation = "23505"
        static let invalidPassword = "28P01"
        static let invalidAuthorization = "28000"
        static let unknownDatabase = "3D000"
        static let adminShutdown = "57P01"
        static let crashShutdown = "57P02"
        static let cannotConnectNow = "57P03"
        static let tooManyConnections = "53300"
        static let insufficientPrivilege = "42501"
        static let readOnlyTransaction = "25006"
        static let raisedException = "P0001"
    }

    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The server's error, without values.
    static func serverError(_ error: any Error) -> PostgresServerError? {
        guard let error = error as? PSQLError, let info = error.serverInfo, let state = info[.sqlState] else { return nil }
        return PostgresServerError(sqlState: state, message: info[.message] ?? "", constraintName: info[.constraintName])
    }

    /// Whether the connection is gone after `error`.
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown,
                .messageDecodingFailure, .unexpectedBackendMessage:
                return true
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                return state == SQLState.adminShutdown || state == SQLState.crashShutdown
            default:
                return false
            }
        }
        return error is ChannelError || error is IOError
    }

    /// A short description of an error, for logs: never a query's values.
    static func summary(_ error: any Error) -> String {
        if let server = serverError(error) { return server.description }
        if let error = error as? PSQLError { return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "") }
        return "\(error)"
    }

    /// An error of opening a connection.
    static func connectionError(_ error: any Error, configuration: PostgresConfiguration) -> StrataError {
        if let server = serverError(error) {
            switch server.sqlState {
            case SQLState.invalidPassword, SQLState.invalidAuthorization:
                return StrataError(
                    .authenticationFailed,
                    "PostgreSQL refused the user '\(configuration.username)' or its password for \(configuration): \(server.message). Check the credentials.",
                    underlyingError: server)
            case SQLState.unknownDatabase:
                return StrataError(
                    .connectionFailed,
                    "The PostgreSQL server has no database '\(configuration.database)' (\(configuration)). Create it first (createdb \(configuration.database)).",
                    underlyingError: server)
            case SQLState.tooManyConnections, SQLState.cannotConnectNow:
                return StrataError(
                    .connectionFailed,
                    "The PostgreSQL server at \(configuration.host):\(configuration.port) refused a connection: \(server.message).",
                    underlyingError: server)
            default:
                return StrataError(
                    .connectionFailed, "Could not connect to \(configuration): \(server.message).", underlyingError: server)
            }
        }
        if let psql = error as? PSQLError {
            switch psql.code {
            case .sslUnsupported:
                return StrataError(
                    .connectionFailed,
                    "The PostgreSQL server at \(configuration.host):\(configuration.port) does not support TLS, which sslmode=\(configuration.tlsMode.rawValue) requires.")
            case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
                return StrataError(
                    .authenticationFailed,
                    "Could not log in to \(configuration) (\(psql.code)). Check the user, the password and the server's pg_hba.conf.")
            default:
                break
            }
        }
        return StrataError(
            .connectionFailed,
            "Could not connect to the PostgreSQL server at \(configuration.host):\(configuration.port) (\(summary(error))). Check that it runs and that the host and port are right.",
            underlyingError: SanitizedError(summary(error)))
    }

    /// An error of a statement.
    static func storeError(_ error: any Error, sql: String?, configuration: PostgresConfiguration) -> StrataError {
        if let error = error as? StrataError { return error }
        if isConnectionLoss(error) {
            return StrataError(
                .connectionLost,
                "The connection to \(configuration) was lost during the operation (\(summary(error))); its transaction did not commit. The next operation connects again.",
                sql: sql, underlyingError: serverError(error) ?? SanitizedError(summary(error)))
        }
        if let server = serverError(error) {
            switch server.sqlState {
            case SQLState.uniqueViolation:
                return StrataError(
                    .constraintConflict,
                    "Saving would break a uniqueness constraint (\(server.constraintName ?? server.message)). Nothing was saved.",
                    sql: sql, underlyingError: server)
            case SQLState.readOnlyTransaction, SQLState.insufficientPrivilege:
                return StrataError(.storeNotWritable, "PostgreSQL refused the write: \(server.message).", sql: sql, underlyingError: server)
            default:
                return StrataError(.storeError, "PostgreSQL: \(server.message)", sql: sql, underlyingError: server)
            }
        }
        return StrataError(.storeError, "PostgreSQL: \(summary(error))", sql: sql, underlyingError: SanitizedError(summary(error)))
    }
}

/// An underlying error reduced to its description, so that nothing else it carries (a query's
/// bound values) travels with a Strata error.
struct SanitizedError: Error, Sendable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
