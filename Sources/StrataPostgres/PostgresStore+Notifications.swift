import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Strata

/// Commits announced across servers: every write transaction sends a `NOTIFY` on the store's
/// channel inside the transaction (PostgreSQL delivers it when, and only if, the transaction
/// commits), and every open store `LISTEN`s on a connection of its own. A notification from
/// another store instance becomes a remote ``StoreCommit`` for the store's commit observers:
/// containers merge it into their contexts, live queries and fetched results controllers
/// fetch again, the history tracker reads the new transactions.
///
/// The payload names the changed objects when they fit in PostgreSQL's 8000-byte limit; a
/// larger commit is announced by its history token (read back from the history) or as a
/// change of unknown objects. After the listening connection is lost and comes back, one
/// commit of unknown objects stands for whatever was missed.
extension PostgresStore {
    /// The channel of a PostgreSQL schema's store.
    static func channel(forSchemaNamed name: String) -> String { "strata." + name }

    /// The payload of a commit's notification: JSON, small enough for `NOTIFY`.
    struct CommitNotice: Codable {
        /// The store instance that committed (its own commits are not announced again).
        var origin: String
        /// Seconds since 1970 when the transaction wrote the notice, for the delivery latency.
        var sent: Double
        var author: String?
        var context: String?
        /// The history transaction, when the store records history.
        var transaction: Int64?
        /// Keys by entity name; `nil` when they did not fit.
        var inserted: [String: [Int64]]?
        var updated: [String: [Int64]]?
        var deleted: [String: [Int64]]?
    }

    /// PostgreSQL refuses payloads of 8000 bytes or more.
    static let maximumPayload = 7_900

    /// The `pg_notify` statement announcing a commit, to run inside its transaction.
    func notification(
        inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID], author: String?, contextName: String?, transaction: Int64?
    ) -> (sql: String, binds: PostgresBindings) {
        func keys(_ ids: [ObjectID]) -> [String: [Int64]] {
            var result: [String: [Int64]] = [:]
            for id in ids { if let key = id.primaryKey { result[id.entityName, default: []].append(key) } }
            return result
        }
        var notice = CommitNotice(
            origin: instanceID, sent: Date().timeIntervalSince1970, author: author, context: contextName, transaction: transaction,
            inserted: keys(inserted), updated: keys(updated), deleted: keys(deleted))
        var payload = (try? JSONEncoder().encode(notice)) ?? Data()
        if payload.count > Self.maximumPayload {
            notice.inserted = nil
            notice.updated = nil
            notice.deleted = nil
            notice.author = author.map { String($0.prefix(1_000)) }
            notice.context = contextName.map { String($0.prefix(1_000)) }
            payload = (try? JSONEncoder().encode(notice)) ?? Data()
        }
        var bindings = PostgresBindings()
        bindings.append(string: Self.channel(forSchemaNamed: configuration.schemaName))
        bindings.append(string: String(decoding: payload, as: UTF8.self))
        return ("SELECT pg_notify($1, $2)", bindings)
    }

    /// Turns a notification into a remote commit for the observers, off the event loop.
    func receive(_ payload: String) {
        guard let notice = try? JSONDecoder().decode(CommitNotice.self, from: Data(payload.utf8)), notice.origin != instanceID
        else { return }
        instrumentation.metrics.recordNotificationLatency(since: Date(timeIntervalSince1970: notice.sent))
        announcements.async { [weak self] in
            guard let self else { return }
            let commit: StoreCommit
            if let inserted = notice.inserted, let updated = notice.updated, let deleted = notice.deleted {
                func ids(_ keys: [String: [Int64]]) -> [ObjectID] {
                    keys.sorted { $0.key < $1.key }.flatMap { entity, keys in
                        keys.map { ObjectID(entityName: entity, entityNameHash: self.schema.entity(named: entity)?.nameHash, storeIdentifier: self.identifier, primaryKey: $0) }
                    }
                }
                commit = StoreCommit(
                    storeIdentifier: identifier, insertedObjectIDs: ids(inserted), updatedObjectIDs: ids(updated),
                    deletedObjectIDs: ids(deleted), author: notice.author, contextName: notice.context,
                    timestamp: Date(timeIntervalSince1970: notice.sent), isRemote: true,
                    historyToken: notice.transaction.map { HistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
            } else if let number = notice.transaction, isPersistentHistoryTrackingEnabled,
                let transaction = try? fetchHistory(
                    HistoryFetchRequest(after: HistoryToken(storeIdentifier: identifier, transactionNumber: number - 1))
                ).first(where: { $0.transactionNumber == number })
            {
                commit = StoreCommit(transaction, isRemote: true)
            } else {
                commit = unknownRemoteCommit()
            }
            commitObservers.notify(commit)
        }
    }

    /// Called when the listener is back, holding the presence lock again: commits may have been
    /// missed meanwhile (observers hear of an unknown commit), and a migration may have run.
    func listenerReconnected() {
        announcements.async { [self] in
            do {
                let recorded = try pool.withConnection { session in
                    try session.query("SELECT value FROM \(quoted(PostgresLayout.metadataTable)) WHERE key = 'versionHash'").rows.first
                        .flatMap { $0.first.flatMap(PostgresValueCoding.data) }
                }
                if let recorded, recorded != Data(schema.versionHash.utf8) {
                    schemaWasMigrated.withLock { $0 = true }
                    logger.error(
                        "The store was migrated to another schema while this container was disconnected; it refuses writes",
                        metadata: ["strata.store": "\(configuration)"])
                }
            } catch {
                logger.warning("Could not check the store's schema after reconnecting", metadata: ["error": "\(error)"])
            }
            commitObservers.notify(unknownRemoteCommit())
        }
    }

    /// A remote commit of objects nobody knows: what was missed while not listening.
    func unknownRemoteCommit() -> StoreCommit {
        StoreCommit(
            storeIdentifier: identifier, insertedObjectIDs: [], updatedObjectIDs: [], deletedObjectIDs: [], author: nil,
            contextName: nil, isRemote: true)
    }
}

/// The connection a store listens on, reconnecting when it is lost.
final class PostgresListener: Sendable {
    /// What changes while the store is open, in the one lock box.
    private struct State {
        var connection: PostgresConnection?
        var isStopped = false
        var attempts = 0
    }
    private let state = LockedBox(State())
    private let configuration: PostgresConnection.Configuration
    private let channel: String
    private let logger: Logger
    private let receive: @Sendable (String) -> Void
    private let reconnected: @Sendable () -> Void
    private let eventLoop: any EventLoop
    /// The advisory lock every open store holds shared, so that a migration (which takes it
    /// exclusively) knows the store is open; held by this connection.
    private let presenceLockKey: Int64
    /// How long to wait for the presence lock while a migration holds it.
    private let lockTimeout: Duration

    init(
        configuration: PostgresConnection.Configuration, channel: String, presenceLockKey: Int64, lockTimeout: Duration,
        logger: Logger, receive: @escaping @Sendable (String) -> Void, reconnected: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.channel = channel
        self.presenceLockKey = presenceLockKey
        self.lockTimeout = lockTimeout
        self.logger = logger
        self.receive = receive
        self.reconnected = reconnected
        self.eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    /// Connects, listens and takes the presence lock (waiting up to the lock timeout while a
    /// migration of the store runs); returns once all are in place.
    ///
    /// - Throws: The connection's error when the first attempt fails (then nothing retries);
    ///   PostgreSQL's `lock_not_available` when a migration held the store past the timeout.
    func start() throws {
        try connect(isReconnection: false).wait()
    }

    private func connect(isReconnection: Bool) -> EventLoopFuture<Void> {
        let channel = self.channel
        let receive = self.receive
        let presenceLockKey = self.presenceLockKey
        let connecting = PostgresConnection.connect(
            on: eventLoop, configuration: configuration, id: 0, logger: PostgresConnectionPool.driverLogger(logger))
            .flatMap { connection -> EventLoopFuture<Void> in
                let stopped = self.state.withLock { state in
                    if !state.isStopped {
                        state.connection = connection
                        state.attempts = 0
                    }
                    return state.isStopped
                }
                if stopped {
                    PostgresConnectionPool.close(connection)
                    return self.eventLoop.makeSucceededVoidFuture()
                }
                connection.addListener(channel: channel) { _, notification in receive(notification.payload) }
                connection.closeFuture.whenComplete { _ in self.connectionClosed(connection) }
                let escaped = "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let logger = PostgresConnectionPool.driverLogger(self.logger)
                let lock = {
                    var bindings = PostgresBindings()
                    bindings.append(integer: presenceLockKey)
                    return bindings
                }()
                // A server- or role-wide statement timeout must not cut the wait for the lock
                // short; the lock timeout bounds it instead.
                let timeout = max(1, Int(self.lockTimeout.components.seconds * 1000 + self.lockTimeout.components.attoseconds / 1_000_000_000_000_000))
                let statements = [
                    "SET statement_timeout = 0", "SET lock_timeout = \(timeout)", "LISTEN \(escaped)",
                ]
                var listening = self.eventLoop.makeSucceededVoidFuture()
                for statement in statements {
                    listening = listening.flatMap { connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).map { _ in } }
                }
                let locked =
                    listening
                    .flatMap { connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock_shared($1)", binds: lock), logger: logger) }
                    .flatMap { _ in connection.query(PostgresQuery(unsafeSQL: "SET lock_timeout = 0"), logger: logger) }
                    .map { _ in
                        if isReconnection { self.reconnected() }
                    }
                guard isReconnection else { return locked }
                // Connected, but could not listen or take the lock: the connection goes, and its
                // closing schedules the next attempt (`connectionClosed`).
                return locked.flatMapError { error in
                    self.logger.warning(
                        "Could not listen for other servers' commits; retrying", metadata: ["error": "\(PostgresErrors.summary(error))"])
                    PostgresConnectionPool.close(connection)
                    return self.eventLoop.makeSucceededVoidFuture()
                }
            }
        guard isReconnection else { return connecting }
        return connecting.flatMapError { error in
            self.logger.warning(
                "Could not listen for other servers' commits; retrying", metadata: ["error": "\(PostgresErrors.summary(error))"])
            self.scheduleReconnect()
            return self.eventLoop.makeSucceededVoidFuture()
        }
    }

    private func connectionClosed(_ closed: PostgresConnection) {
        let (current, stopped) = state.withLock { state in
            let current = state.connection === closed
            if current { state.connection = nil }
            return (current, state.isStopped)
        }
        guard current, !stopped else { return }
        logger.warning("Lost the connection that listens for other servers' commits; reconnecting")
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        let (delay, stopped) = state.withLock { state in
            state.attempts += 1
            return (min(2_000, 50 * (1 << min(state.attempts, 6))), state.isStopped)
        }
        guard !stopped else { return }
        eventLoop.scheduleTask(in: .milliseconds(Int64(delay))) {
            _ = self.connect(isReconnection: true)
        }
    }

    /// Stops listening and closes the connection.
    func stop() {
        let connection = state.withLock { state in
            state.isStopped = true
            defer { state.connection = nil }
            return state.connection
        }
        if let connection {
            let closing: EventLoopFuture<Void> = connection.close()
            if MultiThreadedEventLoopGroup.currentEventLoop == nil {
                try? closing.wait()
            } else {
                closing.whenComplete { _ in withExtendedLifetime(connection) {} }
            }
        }
    }
}
