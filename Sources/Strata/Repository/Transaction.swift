import Foundation

/// A unit of repository work that is stored all at once, or not at all.
///
/// Made by ``Repository/withTransaction(continuing:transactionAuthor:isolation:_:)``. While its
/// block runs, ``current`` is the transaction, and every call of the repository — in the block,
/// in functions it calls, and in child tasks it starts — joins it: writes go into the
/// transaction's one context and reach the store together when the block returns, saved once
/// with the transaction's author. Reads in the transaction see its unsaved writes.
///
/// ```swift
/// let ids = try await repository.withTransaction(transactionAuthor: "import") { transaction in
///     let heat = try await repository.create(Movie.Value(id: UUID(), title: "Heat"))
///     let ronin = try await repository.create(Movie.Value(id: UUID(), title: "Ronin"))
///     return [heat.objectID, ronin.objectID]
/// }
/// ```
///
/// `Transaction` is `Sendable`: pass it to a detached task and rejoin it there with
/// `withTransaction(continuing: transaction)` (task-local values do not reach detached tasks).
public final class Transaction: Sendable {
    /// The transaction the current task is running in, if any.
    @TaskLocal public static var current: Transaction?

    /// The container whose stores the transaction writes to.
    public let container: PersistentContainer
    /// The author the transaction's save records (calls' own authors are ignored).
    public let transactionAuthor: TransactionAuthor?

    let worker: TransactionWorker
    private let state = LockedBox(State())

    private struct State {
        var isCancelled = false
        var isFinished = false
    }

    init(container: PersistentContainer, transactionAuthor: TransactionAuthor?) {
        self.container = container
        self.transactionAuthor = transactionAuthor
        self.worker = TransactionWorker(container: container)
    }

    /// Abandons the transaction's writes: nothing it wrote (or writes from now on) is stored,
    /// and its reads no longer see them. The block goes on, and
    /// ``Repository/withTransaction(continuing:transactionAuthor:isolation:_:)`` still returns
    /// its result.
    public func cancel() {
        state.withLock { $0.isCancelled = true }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Runs `body` on a scratch pad child of the transaction's context; the scratch pad's
    /// changes join the transaction only when `body` and the push succeed.
    func perform<T: Sendable>(
        saving: Bool, _ body: @escaping @Sendable (ObjectContext) throws -> () throws -> T
    ) async throws -> T {
        let (cancelled, finished) = state.withLock { ($0.isCancelled, $0.isFinished) }
        guard !finished else {
            throw RepositoryError(
                .transactionEnded,
                "The transaction has ended; start a new one (continuing: rejoins a transaction only while its block runs).")
        }
        return try await worker.run(discardingChanges: cancelled, saving: saving, body)
    }

    /// Saves the transaction's context (unless cancelled) and ends the transaction.
    func finish(saving: Bool) async throws {
        let cancelled = state.withLock { state in
            state.isFinished = true
            return state.isCancelled
        }
        guard saving, !cancelled else { return }
        try await worker.save(author: transactionAuthor)
    }
}

/// The transaction's context, used by one call at a time.
actor TransactionWorker {
    private let context: ObjectContext

    init(container: PersistentContainer) {
        context = container.newBackgroundContext()
        context.name = "repositoryTransaction"
    }

    func run<T: Sendable>(
        discardingChanges: Bool, saving: Bool, _ body: @Sendable (ObjectContext) throws -> () throws -> T
    ) throws -> T {
        if discardingChanges { context.reset() }
        let scratchPad = ObjectContext(parent: context)
        scratchPad.name = "repositoryScratchPad"
        let finish = try body(scratchPad)
        if saving, scratchPad.hasChanges {
            try scratchPad.obtainPermanentIDs(for: Array(scratchPad.insertedObjects))
            try scratchPad.save()
        }
        return try finish()
    }

    func save(author: TransactionAuthor?) throws {
        guard context.hasChanges else { return }
        context.transactionAuthor = author
        try context.save()
    }
}
