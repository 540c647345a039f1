import Foundation

/// A unit of repository work that is stored all at once, or not at all.
///
/// Made by ``Repository/withTransaction(continuing:transactionAuthor:isolation:_:)``. While its
/// block runs, ``current`` is the transaction, and every call of the repository — in the block,
/// in functions it calls, and in child tasks it starts — joins it: writes go into the
/// transaction's one context and reach the store together when the block returns, saved once
/// with the transaction's author. Fetches and reads in the transaction see its unsaved
/// writes; aggregates and subscriptions see what is stored.
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
    /// The transactions the current task runs in, innermost last (one per container at most:
    /// a repository joins the one of its own container).
    @TaskLocal static var running: [Transaction] = []

    /// The innermost transaction the current task is running in, if any.
    public static var current: Transaction? { running.last }

    /// The container whose stores the transaction writes to.
    public let container: PersistentContainer
    /// The author the transaction's save records (calls' own authors are ignored).
    public let transactionAuthor: TransactionAuthor?

    let worker: TransactionWorker
    private let state = LockedBox(State())

    private struct State {
        var isCancelled = false
        /// The error of a joined block that threw: the transaction is abandoned.
        var abandonedBy: (any Error)?
    }

    init(container: PersistentContainer, transactionAuthor: TransactionAuthor?) {
        self.container = container
        self.transactionAuthor = transactionAuthor
        self.worker = TransactionWorker(container: container)
    }

    /// Abandons the transaction's writes: nothing it wrote (or writes from now on) is stored,
    /// and its later reads no longer see what it wrote before. The block goes on, and
    /// ``Repository/withTransaction(continuing:transactionAuthor:isolation:_:)`` still returns
    /// its result.
    ///
    /// For example:
    ///
    /// ```swift
    /// let imported = try await repository.withTransaction(transactionAuthor: "import") { transaction in
    ///     let movies = try await repository.createAtomically(batch)
    ///     if movies.contains(where: { $0.boxOffice < 0 }) { transaction.cancel() }   // nothing is stored
    ///     return movies.count
    /// }
    /// ```
    public func cancel() {
        state.withLock { $0.isCancelled = true }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Abandons the transaction because a joined block threw `error` (the first one counts).
    func abandon(because error: any Error) {
        state.withLock { state in
            if state.abandonedBy == nil { state.abandonedBy = error }
        }
    }

    /// The error that abandoned the transaction, if one did.
    var abandonedBy: (any Error)? { state.withLock { $0.abandonedBy } }

    /// Runs `body` on a scratch pad child of the transaction's context; the scratch pad's
    /// changes join the transaction only when `body`, its result and the push all succeed.
    func perform<T: Sendable>(
        saving: Bool, _ body: @escaping @Sendable (ObjectContext) throws -> () throws -> T
    ) async throws -> T {
        try await worker.run(isCancelled: { [state] in state.withLock { $0.isCancelled } }, saving: saving, body)
    }

    /// Ends the transaction; saves its context unless `saving` is false or it was cancelled.
    func finish(saving: Bool) async throws {
        try await worker.finish(saving: saving, isCancelled: { [state] in state.withLock { $0.isCancelled } }, author: transactionAuthor)
    }
}

/// The transaction's context, used by one call at a time; whether the transaction has ended
/// is decided here too, so that no call can slip in after the save.
actor TransactionWorker {
    private let context: ObjectContext
    private var isFinished = false
    private var wasReset = false

    init(container: PersistentContainer) {
        context = container.newBackgroundContext()
        context.name = "repositoryTransaction"
    }

    func run<T: Sendable>(
        isCancelled: @Sendable () -> Bool, saving: Bool, _ body: @Sendable (ObjectContext) throws -> () throws -> T
    ) throws -> T {
        guard !isFinished else {
            throw RepositoryError(
                .transactionEnded,
                "The transaction has ended; start a new one (continuing: rejoins a transaction only while its block runs).")
        }
        if isCancelled(), !wasReset {
            context.reset()
            wasReset = true
        }
        let scratchPad = ObjectContext(parent: context)
        scratchPad.name = "repositoryScratchPad"
        let finish = try body(scratchPad)
        guard saving, scratchPad.hasChanges else { return try finish() }
        try scratchPad.obtainPermanentIDs(for: Array(scratchPad.insertedObjects))
        // The store judges uniqueness only when the transaction saves; judge this call's
        // objects now, so that the call that makes a duplicate is the one that fails.
        try UniquenessCheck.check(scratchPad)
        let result = try finish()
        try scratchPad.save()
        return result
    }

    func finish(saving: Bool, isCancelled: @Sendable () -> Bool, author: TransactionAuthor?) throws {
        isFinished = true
        guard saving, !isCancelled(), context.hasChanges else { return }
        context.transactionAuthor = author
        try context.save()
    }
}

/// Finds the inserted and changed objects of a context that would break a uniqueness
/// constraint: against each other, the parent's unsaved objects and the store.
enum UniquenessCheck {
    static func check(_ context: ObjectContext) throws {
        let candidates = context.insertedObjects.union(context.updatedObjects)
        for object in candidates {
            var declaring: Entity? = object.entity
            while let entity = declaring {
                for constraint in entity.declaration.uniquenessConstraints {
                    try check(object, constraint: constraint, scope: entity, in: context)
                }
                declaring = entity.superentity
            }
        }
    }

    private static func check(_ object: ManagedObject, constraint: [String], scope: Entity, in context: ObjectContext) throws {
        var comparisons: [QueryPredicate] = []
        var described: [String] = []
        for key in constraint {
            guard object.entity.attribute(named: key) != nil else { return }
            let value = try object.attributeValue(forKey: key)
            if value == .null { return }  // missing values never conflict
            comparisons.append(.comparison(.keyPath(key), .equalTo, .value(value)))
            described.append("\(key) = \(value)")
        }
        var request = FetchRequest<ManagedObject>(entityName: scope.name, predicate: FetchPredicate(.and(comparisons)))
        request.fetchLimit = 2
        let clash = try context.fetch(request).first { $0 !== object && $0.objectID != object.objectID }
        guard let clash else { return }
        throw StrataError(
            .constraintConflict,
            "\(object.entity.name) \(object.objectID) has the same \(described.joined(separator: ", ")) as \(clash.objectID), which \(scope.name)'s uniqueness constraint (\(constraint.joined(separator: ", "))) forbids.",
            entityName: scope.name, objectID: object.objectID)
    }
}
