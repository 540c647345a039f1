import Foundation
import GRDB

/// A store in an SQLite database: a file (the embedded default) or a private in-memory database.
///
/// A file store runs in WAL mode with one writer and concurrent readers (GRDB's
/// `DatabasePool`), so reading never blocks saving. Every save is one transaction.
///
/// ```swift
/// let store = try SQLiteStore(url: URL(fileURLWithPath: "Movies.sqlite"), schema: schema)
/// let memory = try SQLiteStore(inMemoryWith: schema)
/// ```
///
/// Opening checks the file before touching it: a file that is not an SQLite database, an SQLite
/// database that is not a Strata store, a truncated or corrupt file, and a store written with
/// another schema each give a typed error, and the file is left exactly as it was.
public final class SQLiteStore: PersistentStore {
    public let identifier: String
    public let schema: Schema
    public let url: URL?
    let layout: StoreLayout
    let writer: any DatabaseWriter
    /// Reads in flight, waited for by ``close()``.
    let readGate = ReadGate()
    let commitObservers = CommitObservers()
    /// Whether the store was opened for reading only: saves are refused.
    public let isReadOnly: Bool
    /// Whether the store records persistent history: asked for when it was opened, recorded by
    /// an earlier open of the file, or turned on since by another connection (a save notices
    /// it and records from then on).
    public var isPersistentHistoryTrackingEnabled: Bool { historyTracking.withLock { $0 } }
    let historyTracking: LockedBox<Bool>
    /// What polling has announced of the history.
    let historyAnnouncement = LockedBox(HistoryAnnouncementState())
    /// Held while the other connections' transactions are read and announced, so that two
    /// polling tasks (one replacing the other) never announce a transaction twice.
    let announcing = LockedBox(())
    /// Set once an operation found the file damaged: the store then refuses every write until
    /// it is closed and opened again (which checks the file anew).
    let corruptionDetected = LockedBox(false)
    /// Whether closing may remove the `-wal` and `-shm` files: they were not there before a
    /// read-only open made them (a writable store's are SQLite's own to remove).
    private let removesSideFilesOnClose: Bool
    /// The task looking for other processes' commits, while one runs.
    private let remoteChangePolling = LockedBox<Task<Void, Never>?>(nil)
    /// The shared lock a file store holds while open, which keeps migrations out.
    private let fileLock: StoreFileLock?
    /// Where the store logs and what it counts (``StoreDescription/logger``).
    let instrumentation: StoreInstrumentation

    /// Opens the store at `url`, creating it (and its folder) if there is no file yet.
    ///
    /// Opening checks the file before writing to it, and a file that is refused is left exactly
    /// as it was, with no file added next to it. A new store is built under a temporary name and
    /// moved into place complete, so a crash while creating it never leaves a half-made store.
    /// A store left mid-transaction by a crash (a hot rollback journal) is rolled back to its
    /// last committed state, as SQLite does. Opening a store and closing it without saving
    /// changes no byte of it.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - schema: The schema of the objects in the store.
    ///   - isReadOnly: Whether to open the store for reading only (Core Data's
    ///     `NSReadOnlyPersistentStoreOption`): such an open writes nothing to the file, and
    ///     saves fail with ``StrataError/Code/storeNotWritable``. The store must exist.
    ///   - persistentHistoryTracking: Whether the store records persistent history
    ///     (``StoreDescription/isPersistentHistoryTrackingEnabled``). A file that recorded
    ///     history before keeps recording either way.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/notAStore`` (not a Strata store,
    ///   or not a regular file), ``StrataError/Code/corruptStore`` (damaged file),
    ///   ``StrataError/Code/incompatibleSchema`` (written with another schema; the details list
    ///   the differences) or ``StrataError/Code/storeNotWritable`` (the location cannot be
    ///   written, or a read-only store does not exist or needs recovery).
    public convenience init(
        url: URL, schema: Schema, isReadOnly: Bool = false, persistentHistoryTracking: Bool = false
    ) throws {
        try self.init(
            url: url, schema: schema, isReadOnly: isReadOnly, persistentHistoryTracking: persistentHistoryTracking,
            instrumentation: .silent(kind: "sqlite", name: url.lastPathComponent))
    }

    /// Opens the store at `url` as ``init(url:schema:isReadOnly:persistentHistoryTracking:)``
    /// does, logging and counting through `instrumentation`.
    package init(
        url: URL, schema: Schema, isReadOnly: Bool, persistentHistoryTracking: Bool,
        instrumentation: StoreInstrumentation
    ) throws {
        let layout = StoreLayout(schema: schema)
        removesSideFilesOnClose =
            !isReadOnly || (Self.fileSize(atPath: url.path + "-wal") == nil && Self.fileSize(atPath: url.path + "-shm") == nil)
        // Taken before SQLite opens the file, so that a store being migrated is not read with
        // its old schema (a new store is locked once it exists).
        let earlyLock = try StoreFileLock(url: url, exclusive: false)
        let opened = try Self.openFile(
            at: url, schema: schema, layout: layout, isReadOnly: isReadOnly, instrumentation: instrumentation)
        do {
            fileLock = try earlyLock.isHolding ? earlyLock : StoreFileLock(url: url, exclusive: false)
            historyTracking = LockedBox(
                try Self.prepareHistory(opened.pool, requested: persistentHistoryTracking, isReadOnly: isReadOnly))
        } catch {
            try? opened.pool.close()
            if let error = error as? StrataError { throw error }
            throw Self.openingError(error, url: url)
        }
        self.identifier = opened.identifier
        self.schema = schema
        self.url = url
        self.layout = layout
        self.writer = opened.pool
        self.isReadOnly = isReadOnly
        self.instrumentation = instrumentation
        instrumentation.logger.info("Opened SQLite store", metadata: ["strata.storeIdentifier": "\(identifier)"])
    }

    /// Creates an empty store in memory, private to this instance.
    ///
    /// - Parameters:
    ///   - schema: The schema of the objects in the store.
    ///   - persistentHistoryTracking: Whether the store records persistent history.
    public convenience init(inMemoryWith schema: Schema, persistentHistoryTracking: Bool = false) throws {
        try self.init(
            inMemoryWith: schema, persistentHistoryTracking: persistentHistoryTracking,
            instrumentation: .silent(kind: "memory", name: "in-memory"))
    }

    /// Creates an empty store in memory as ``init(inMemoryWith:persistentHistoryTracking:)``
    /// does, logging and counting through `instrumentation`.
    package init(inMemoryWith schema: Schema, persistentHistoryTracking: Bool, instrumentation: StoreInstrumentation) throws {
        let layout = StoreLayout(schema: schema)
        let identifier = UUID().uuidString
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                SQLiteFunctions.register(in: db)
                Self.observeStatements(of: db, instrumentation)
            }
            queue = try DatabaseQueue(configuration: configuration)
            try Self.prepareNewStore(queue, layout: layout, schema: schema, identifier: identifier)
            historyTracking = LockedBox(
                try Self.prepareHistory(queue, requested: persistentHistoryTracking, isReadOnly: false))
        } catch {
            throw StrataError(.storeError, "Could not create an in-memory store.", underlyingError: error)
        }
        self.identifier = identifier
        self.schema = schema
        self.url = nil
        self.layout = layout
        self.writer = queue
        self.isReadOnly = false
        self.removesSideFilesOnClose = false
        self.fileLock = nil
        self.instrumentation = instrumentation
    }

    /// Creates a store in memory, private to this instance, that starts as a copy of the
    /// store file at `url` (``StoreDescription/inMemory(copyOf:configuration:isReadOnly:)``).
    ///
    /// The file is opened read-only and never written; later changes to it do not reach the
    /// copy, and saves to the copy do not reach the file. The copy keeps the file's store
    /// identifier, so object IDs and their URIs are the same in both.
    ///
    /// - Parameters:
    ///   - url: A Strata store file written with `schema`.
    ///   - schema: The schema of the objects in the store.
    ///   - isReadOnly: Whether saves to the copy are refused.
    /// - Throws: ``StrataError`` as ``init(url:schema:isReadOnly:persistentHistoryTracking:)``
    ///   does for a read-only open of `url`, or ``StrataError/Code/storeError`` when the copy
    ///   cannot be made.
    public convenience init(inMemoryCopyOf url: URL, schema: Schema, isReadOnly: Bool = false) throws {
        try self.init(
            inMemoryCopyOf: url, schema: schema, isReadOnly: isReadOnly,
            instrumentation: .silent(kind: "memory", name: "in-memory"))
    }

    /// Creates an in-memory copy of a store file as ``init(inMemoryCopyOf:schema:isReadOnly:)``
    /// does, logging and counting through `instrumentation`.
    package init(inMemoryCopyOf url: URL, schema: Schema, isReadOnly: Bool, instrumentation: StoreInstrumentation) throws {
        let file = try SQLiteStore(url: url, schema: schema, isReadOnly: true)
        defer { try? file.close() }
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                SQLiteFunctions.register(in: db)
                Self.observeStatements(of: db, instrumentation)
            }
            queue = try DatabaseQueue(configuration: configuration)
            try file.writer.backup(to: queue)
        } catch {
            throw StrataError(.storeError, "Could not copy the store at \(url.path) into memory.", fileURL: url, underlyingError: error)
        }
        historyTracking = LockedBox(file.isPersistentHistoryTrackingEnabled)
        self.identifier = file.identifier
        self.schema = schema
        self.url = nil
        self.layout = file.layout
        self.writer = queue
        self.isReadOnly = isReadOnly
        self.removesSideFilesOnClose = false
        self.fileLock = nil
        self.instrumentation = instrumentation
    }

    public func addCommitObserver(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        commitObservers.add(observer)
    }

    /// Looks for commits of other processes and connections every `interval`, and tells the
    /// commit observers of each with a remote ``StoreCommit``. Polling stops when the store
    /// closes or is released; calling this again changes the interval.
    ///
    /// SQLite's `PRAGMA data_version`, read on the writer connection, changes exactly when
    /// another connection committed; this store's own saves do not move it. In a store that
    /// records persistent history, each transaction the others committed is announced as a
    /// commit of its own that names its objects, author and context; without history, one
    /// commit that names no objects stands for whatever changed.
    public func startPollingForRemoteChanges(every interval: Duration) {
        guard url != nil else { return }  // nobody else can write a private in-memory store
        // The version to compare with is read now, so that a commit made before the task first
        // runs is not missed.
        let initial = try? writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
        // Polling first, so that saves from now on remember their transactions as the store's own.
        // Polling started again (a new interval) goes on from where the last one stopped.
        historyAnnouncement.withLock { $0.isPolling = true }
        if isPersistentHistoryTrackingEnabled, historyAnnouncement.withLock({ $0.lastSeen == nil }) {
            let current = (try? currentHistoryToken())?.transactionNumber ?? 0
            historyAnnouncement.withLock { state in
                guard state.lastSeen == nil else { return }
                state.lastSeen = current
                state.own = state.own.filter { $0 > current }
            }
        }
        // Reading the history blocks a thread: the polling runs on Strata's threads for blocking
        // work, so that tasks holding the cooperative threads cannot keep it from announcing.
        let task = Task.detached(executorPreference: BlockingWorkExecutor.shared) { [weak self] in
            var last = initial
            while !Task.isCancelled {
                // The store is held only while it is asked, never while the task sleeps.
                guard let version = await self?.dataVersion() else { return }
                if let last, let version, version != last {
                    self?.notifyRemoteCommit()
                } else if let self, self.historyAnnouncement.withLock({ $0.own.count > 256 }) {
                    // Only this store wrote: reading the history lets go of its own numbers.
                    self.notifyRemoteCommit()
                }
                if version != nil { last = version }
                try? await Task.sleep(for: interval)
            }
        }
        remoteChangePolling.withLock { running in
            running?.cancel()
            running = task
        }
    }

    deinit {
        remoteChangePolling.withLock { $0?.cancel() }
    }

    /// The writer connection's `PRAGMA data_version`, or `nil` when it cannot be read now (a
    /// busy or closing store: polling tries again at the next interval).
    private func dataVersion() async -> Int?? {
        .some(try? await writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") })
    }

    private func notifyRemoteCommit() {
        let announced = announcing.withLock { _ -> Bool in
            guard isPersistentHistoryTrackingEnabled, let commits = remoteCommitsFromHistory() else { return false }
            // No new transaction: the others only pruned history or recorded what they merged.
            for commit in commits { commitObservers.notify(commit) }
            return true
        }
        if announced { return }
        commitObservers.notify(
            StoreCommit(
                storeIdentifier: identifier, insertedObjectIDs: [], updatedObjectIDs: [], deletedObjectIDs: [],
                author: nil, contextName: nil, isRemote: true))
    }

    public func close() throws {
        remoteChangePolling.withLock { running in
            running?.cancel()
            running = nil
        }
        // GRDB closes its readers once they are idle, but a read that looked up the reader pool
        // just before could still pick a closed reader: let reads in flight end, refuse new ones.
        readGate.close()
        do {
            try writer.close()
        } catch {
            throw StrataError(.storeError, "Could not close the store: \(error.localizedDescription)", fileURL: url, underlyingError: error)
        }
        if let url, removesSideFilesOnClose { Self.removeSideFilesIfUnused(of: url) }
        fileLock?.release()
        instrumentation.logger.info("Closed SQLite store")
    }
}

extension SQLiteStore {
    /// Reads through the pool unless the store is closing or closed.
    func gatedRead<T>(_ body: (Database) throws -> T) throws -> T {
        guard readGate.enter() else {
            throw StrataError(.storeClosed, "The store was closed; open a new container to keep working.", fileURL: url)
        }
        defer { readGate.leave() }
        return try writer.read(body)
    }
}

/// Counts reads in flight so that closing waits for them and refuses new ones.
final class ReadGate: Sendable {
    private struct State {
        var active = 0
        var isClosed = false
    }

    private let state = LockedBox(State())

    /// Starts a read; `false` once the store is closing.
    func enter() -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.active += 1
            return true
        }
    }

    /// Ends a read.
    func leave() {
        state.withLock { state in
            state.active -= 1
            if state.active == 0 { self.state.broadcast() }
        }
    }

    /// Refuses new reads and waits for those in flight.
    func close() {
        state.withLock(waitingAsNeeded: { state, _ in
            state.isClosed = true
            return state.active > 0 ? .wait() : .done(())
        })
    }
}
