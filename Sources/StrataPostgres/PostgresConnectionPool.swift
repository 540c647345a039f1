import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Strata

/// The connections of one PostgreSQL store, lent one at a time to synchronous store calls.
///
/// Strata's store protocol is synchronous: a context's fetch or save runs to completion on the
/// thread that asked. postgres-nio is asynchronous, on SwiftNIO's event loops. This pool meets
/// the two without Swift's cooperative thread pool: the calling thread sends a query on a
/// connection's event loop and waits for the answer on a condition, while the event loop
/// threads (never blocked) do the I/O. So a store call can never wait for a task that needs
/// the thread it blocks, and many concurrent callers each hold one connection at most.
///
/// Calling the store from an event-loop thread would block that loop: it is refused with a
/// typed error instead (``StrataError/Code/storeError``). Server handlers reach the store
/// through `performBackgroundTask`, repositories or their own threads.
final class PostgresConnectionPool: Sendable {
    let configuration: PostgresConfiguration
    /// Where the pool logs connection events and statements, and counts waits.
    let instrumentation: StoreInstrumentation
    var logger: Logger { instrumentation.logger }
    /// The logger postgres-nio gets: the store's, from `notice` up. At `debug` and `trace`
    /// postgres-nio logs the messages it sends, bound values included, which Strata's logs
    /// never show.
    var driverLogger: Logger { Self.driverLogger(instrumentation.logger) }

    static func driverLogger(_ logger: Logger) -> Logger {
        var logger = logger
        logger.logLevel = max(logger.logLevel, .notice)
        return logger
    }
    let connectionConfiguration: PostgresConnection.Configuration
    private let eventLoopGroup: any EventLoopGroup
    /// Statements every new connection runs first (`SET search_path`, …).
    private let sessionSetup: [String]
    private let state = LockedBox(PoolState())
    private let connectionCount = LockedBox(0)

    init(
        configuration: PostgresConfiguration, instrumentation: StoreInstrumentation, sessionSetup: [String],
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.configuration = configuration
        self.instrumentation = instrumentation
        self.sessionSetup = sessionSetup
        self.eventLoopGroup = eventLoopGroup
        var connection = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database,
            tls: try Self.tls(for: configuration))
        connection.options.connectTimeout = .nanoseconds(
            Int64(configuration.pool.connectTimeout.components.seconds) * 1_000_000_000
                + configuration.pool.connectTimeout.components.attoseconds / 1_000_000_000)
        connection.options.additionalStartupParameters = [("application_name", configuration.applicationName)]
        if configuration.tlsMode == .verifyFull { connection.options.tlsServerName = configuration.host }
        self.connectionConfiguration = connection
    }

    private static func tls(for configuration: PostgresConfiguration) throws -> PostgresConnection.Configuration.TLS {
        guard configuration.tlsMode != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch configuration.tlsMode {
        case .disable, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let path = configuration.rootCertificatePath {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
            } catch {
                throw StrataError(
                    .invalidConfiguration, "Could not read the root certificates at \(path) (sslrootcert).",
                    underlyingError: error)
            }
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw StrataError(.invalidConfiguration, "Could not set up TLS for \(configuration).", underlyingError: error)
        }
        return configuration.tlsMode == .prefer ? .prefer(context) : .require(context)
    }

    /// Lends a connection to `body`; a connection that broke meanwhile is closed, not returned.
    func withConnection<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try Self.checkNotOnEventLoop()
        let connection = try acquire()
        let session = PostgresSession(connection: connection, pool: self)
        do {
            let result = try body(session)
            release(connection, broken: session.isBroken)
            return result
        } catch {
            release(connection, broken: session.isBroken || connection.isClosed)
            throw error
        }
    }

    static func checkNotOnEventLoop() throws {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw StrataError(
                .storeError,
                "A PostgreSQL store was called on a SwiftNIO event-loop thread, which it would block. Call it from performBackgroundTask, a repository, or a thread of your own.")
        }
    }

    private func acquire() throws -> PostgresConnection {
        let start = ContinuousClock.now
        let deadline = Date().addingTimeInterval(
            Double(configuration.pool.acquireTimeout.components.seconds)
                + Double(configuration.pool.acquireTimeout.components.attoseconds) / 1e18)
        var waited = false
        // An idle connection found closed, to uncount in the same locked stretch as the next look.
        var forgetsClosedConnection = false
        while true {
            let found = state.withLock(waitingAsNeeded: { state, wake -> LockStep<PoolLookup> in
                if forgetsClosedConnection {
                    forgetsClosedConnection = false
                    state.open -= 1
                }
                if wake == .timedOut { return .done(.exhausted) }
                if state.isClosed { return .done(.closed) }
                if let connection = state.idle.popLast() { return .done(.idle(connection)) }
                if state.open < configuration.pool.maximumConnections {
                    state.open += 1
                    return .done(.connect)
                }
                waited = true
                return .wait(until: deadline)
            })
            switch found {
            case .closed:
                throw StrataError(.storeClosed, "The store was closed; open a new container to keep working.")
            case .idle(let connection):
                if waited { instrumentation.metrics.recordPoolWait(ContinuousClock.now - start) }
                if connection.isClosed {
                    // The server went away while it was idle: forget it and find another.
                    forgetsClosedConnection = true
                    continue
                }
                return connection
            case .connect:
                do {
                    let connection = try connect()
                    if waited { instrumentation.metrics.recordPoolWait(ContinuousClock.now - start) }
                    return connection
                } catch {
                    state.withLock { state in
                        state.open -= 1
                        self.state.signal()
                    }
                    throw error
                }
            case .exhausted:
                instrumentation.metrics.recordPoolWait(ContinuousClock.now - start)
                instrumentation.metrics.poolExhausted.increment()
                instrumentation.logger.warning(
                    "No free PostgreSQL connection", metadata: ["strata.poolSize": "\(configuration.pool.maximumConnections)"])
                throw StrataError(
                    .poolExhausted,
                    "All \(configuration.pool.maximumConnections) connections to \(configuration) stayed busy for \(configuration.pool.acquireTimeout). Raise the pool size (pool_size) or the server's max_connections, or shorten transactions.")
            }
        }
    }

    private func release(_ connection: PostgresConnection, broken: Bool) {
        state.withLock { state in
            if broken || state.isClosed {
                state.open -= 1
                Self.close(connection)
            } else {
                state.idle.append(connection)
            }
            self.state.signal()
        }
    }

    /// Opens one connection and prepares its session.
    private func connect() throws -> PostgresConnection {
        let id = connectionCount.withLock { count in
            count += 1
            return count
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection.connect(
                on: eventLoopGroup.next(), configuration: connectionConfiguration, id: id, logger: driverLogger
            ).wait()
        } catch {
            logger.warning(
                "Could not connect to PostgreSQL", metadata: ["strata.store": "\(configuration)", "error": "\(PostgresErrors.summary(error))"])
            throw PostgresErrors.connectionError(error, configuration: configuration)
        }
        logger.debug("Connected to PostgreSQL", metadata: ["strata.store": "\(configuration)", "strata.connection": "\(id)"])
        let session = PostgresSession(connection: connection, pool: self)
        do {
            for statement in sessionSetup { _ = try session.query(statement) }
        } catch {
            Self.close(connection)
            throw error
        }
        return connection
    }

    /// Starts closing a connection, keeping it alive until it is closed (postgres-nio checks
    /// that a connection is closed when it goes away).
    static func close(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Closes every idle connection and refuses new requests; connections in use close when
    /// they come back.
    func close() {
        let idle = state.withLock { state in
            state.isClosed = true
            let idle = state.idle
            state.idle.removeAll()
            state.open -= idle.count
            self.state.broadcast()
            return idle
        }
        for connection in idle {
            let closing: EventLoopFuture<Void> = connection.close()
            // Waited for, unless this is an event loop (a store released there), which must not block.
            if MultiThreadedEventLoopGroup.currentEventLoop == nil {
                try? closing.wait()
            } else {
                closing.whenComplete { _ in withExtendedLifetime(connection) {} }
            }
        }
    }
}

/// The pool's mutable state.
private struct PoolState {
    var idle: [PostgresConnection] = []
    /// Connections open or being opened, idle or lent.
    var open = 0
    var isClosed = false
}

/// What a look at the pool's state found for a connection request.
private enum PoolLookup {
    /// The pool is closed.
    case closed
    /// An idle connection, now taken from the pool.
    case idle(PostgresConnection)
    /// Room for one more connection, now counted as open: the caller opens it.
    case connect
    /// No connection came free before the deadline.
    case exhausted
}

/// One connection lent to a store call: synchronous queries that wait for the event loop.
final class PostgresSession {
    let connection: PostgresConnection
    unowned let pool: PostgresConnectionPool
    /// Set when the connection failed in a way that leaves it unusable.
    private(set) var isBroken = false
    /// The SQL of the statement that ran last, for errors (never its values).
    var lastSQL: String?

    init(connection: PostgresConnection, pool: PostgresConnectionPool) {
        self.connection = connection
        self.pool = pool
    }

    /// Runs one statement and collects its rows.
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
        lastSQL = sql
        do {
            return try pool.instrumentation.timing(sql) {
                try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: pool.driverLogger).wait()
            }
        } catch {
            throw failure(error, sql: sql)
        }
    }

    /// Runs one statement and hands each row to `onRow` as it arrives, on the connection's
    /// event loop (so `onRow` must be quick and must not block).
    ///
    /// Meanwhile `whileRunning` runs on the calling thread, to consume what `onRow` produces;
    /// `onEnd` is called on the event loop once the statement finished, successfully or not, so
    /// that `whileRunning` knows when to stop. An error `whileRunning` throws is rethrown after
    /// the statement finished (the connection is then free for the next one).
    func query(
        _ sql: String, _ binds: PostgresBindings, onRow: @escaping @Sendable (PostgresRow) -> Void,
        onEnd: @escaping @Sendable () -> Void = {}, whileRunning: () throws -> Void = {}
    ) throws {
        lastSQL = sql
        var consumerError: (any Error)?
        // The statement is timed until its last row arrived, not until the caller is done with
        // the rows: a slow consumer does not make a slow statement.
        let instrumentation = pool.instrumentation
        let observes = instrumentation.observesStatements
        let start = ContinuousClock.now
        do {
            let running = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: pool.driverLogger, onRow)
            running.whenComplete { _ in
                if observes { instrumentation.statement(sql, duration: ContinuousClock.now - start) }
                onEnd()
            }
            do {
                try whileRunning()
            } catch {
                consumerError = error
            }
            _ = try running.wait()
        } catch {
            throw failure(error, sql: sql)
        }
        if let consumerError { throw consumerError }
    }

    /// Takes the advisory lock `key` until the open transaction ends.
    func lockUntilTransactionEnds(_ key: Int64) throws {
        var bindings = PostgresBindings()
        bindings.append(integer: key)
        try query("SELECT pg_advisory_xact_lock($1)", bindings)
    }

    /// The names of the relations of `kinds` (`pg_class.relkind` letters, such as `r` for
    /// tables and `S` for sequences) in the PostgreSQL schema `schemaName`.
    func relationNames(ofKinds kinds: [Character], inSchema schemaName: String) throws -> [String] {
        var bindings = PostgresBindings()
        bindings.append(string: schemaName)
        bindings.append(string: String(kinds))
        return try query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND strpos($2, c.relkind::text) > 0",
            bindings
        ).rows.compactMap { $0.first.flatMap(PostgresValueCoding.string) }
    }

    /// Sends several statements before waiting for any of them, then waits for all. This saves
    /// the waits between statements on this side; postgres-nio (1.33) still sends each
    /// statement after the previous one's reply, so it is not one round trip. The first
    /// failure is thrown, after every statement finished.
    func pipeline(_ statements: [(sql: String, binds: PostgresBindings)]) throws -> [PostgresQueryResult] {
        guard statements.count > 1 else {
            return try statements.map { try query($0.sql, $0.binds) }
        }
        var results: [PostgresQueryResult] = []
        var firstError: (any Error, String)?
        // Timed as one: the statements travel and run together.
        pool.instrumentation.timing(statements.map(\.sql).joined(separator: "; ")) {
            let futures = statements.map {
                connection.query(PostgresQuery(unsafeSQL: $0.sql, binds: $0.binds), logger: pool.driverLogger)
            }
            for (index, future) in futures.enumerated() {
                do {
                    results.append(try future.wait())
                } catch {
                    if firstError == nil { firstError = (error, statements[index].sql) }
                }
            }
        }
        if let (error, sql) = firstError {
            lastSQL = sql
            throw failure(error, sql: sql)
        }
        return results
    }

    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it
    /// throws (or nothing, when the connection is gone, which rolls the transaction back).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN")
        let result: T
        do {
            result = try body()
        } catch {
            if !isBroken { _ = try? query("ROLLBACK") }
            throw error
        }
        try query("COMMIT")
        return result
    }

    private func failure(_ error: any Error, sql: String) -> StrataError {
        if PostgresErrors.isConnectionLoss(error) || connection.isClosed { isBroken = true }
        return PostgresErrors.storeError(error, sql: sql, configuration: pool.configuration)
    }
}
