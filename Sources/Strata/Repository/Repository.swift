import Foundation

/// Value types in, value types out: create, read, update, delete, batches, fetches,
/// aggregates and live subscriptions over a container, without a managed object ever reaching
/// the caller.
///
/// The repository kit's `CoreDataRepository`, Swift-shaped: calls are `async` and throw a
/// typed ``RepositoryError`` where the kit returned a `Result`; subscriptions come in the kit's
/// two forms (`Result`-yielding and throwing streams).
///
/// ```swift
/// let repository = Repository(container)
/// var heat = try await repository.create(Movie.Value(id: UUID(), title: "Heat"), transactionAuthor: "editor")
/// heat.title = "Heat (1995)"
/// heat = try await repository.update(with: heat)
/// for await result in repository.fetchSubscription(FetchRequest<Movie>(), of: Movie.Value.self) {
///     print(try result.get().map(\.title))
/// }
/// ```
///
/// - Each call works in a context of its own (the scratch pad), made for the call: it reads
///   committed data, and a failed write leaves nothing behind — not in the store, not in any
///   other context. A write is saved once, with the call's transaction author (which
///   persistent history records).
/// - Inside ``withTransaction(continuing:transactionAuthor:isolation:_:)`` every call joins the
///   transaction instead: see ``Transaction``.
/// - Unique constraints are judged by the store with the ``MergePolicy/error`` policy, so a
///   clash is a ``RepositoryError/Code/constraintConflict``, never a silent merge.
/// - `Sendable`: share one repository across tasks and actors.
public final class Repository: Sendable {
    /// The container whose stores the repository reads and writes.
    public let container: PersistentContainer

    /// A repository over `container`'s stores.
    ///
    /// For example:
    ///
    /// ```swift
    /// let repository = Repository(try PersistentContainer(name: "Movies", entities: [Movie.self]))
    /// ```
    public init(_ container: PersistentContainer) {
        self.container = container
    }

    /// The transaction of the current task, if it is one of this repository's container.
    var currentTransaction: Transaction? {
        Transaction.running.last { $0.container === container }
    }

    /// Runs `work` on a task of its own; cancelling the caller cancels it.
    static func detached<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let task = Task.detached(executorPreference: BlockingWorkExecutor.shared, operation: work)
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Runs `body` in a scratch pad and, when `saving`, saves what it changed with `author`;
    /// then calls the closure `body` returned (which reads the saved objects).
    @usableFromInline func perform<T: Sendable>(
        author: TransactionAuthor? = nil, saving: Bool,
        _ body: @escaping @Sendable (ObjectContext) throws -> () throws -> T
    ) async throws(RepositoryError) -> T {
        do {
            try Task.checkCancellation()
            if let transaction = currentTransaction {
                return try await transaction.perform(saving: saving, body)
            }
            let container = container
            return try await Self.detached {
                let context = container.newBackgroundContext()
                context.name = "repository"
                context.transactionAuthor = author
                let finish = try body(context)
                guard saving, context.hasChanges else { return try finish() }
                // The values are made before saving, so that a value that cannot be made
                // stores nothing.
                try context.obtainPermanentIDs(for: Array(context.insertedObjects))
                let result = try finish()
                try Task.checkCancellation()
                try context.save()
                return result
            }
        } catch {
            throw RepositoryError(error)
        }
    }

    /// Runs `body` with the repository's context and a scratch pad child of it, and returns
    /// its result: the escape hatch for what the other calls do not cover. Nothing is saved
    /// for you: save the scratch pad to push its changes into the parent, and the parent to
    /// store them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = try await repository.custom { parentContext, scratchPad in
    ///     let movie = Movie(context: scratchPad)
    ///     movie.title = "Heat"
    ///     try scratchPad.save()
    ///     try parentContext.save()
    ///     return try parentContext.count(for: FetchRequest<Movie>())
    /// }
    /// ```
    ///
    /// Inside a transaction, what the scratch pad pushes into the parent joins the transaction
    /// when `block` returns (saving the parent pushes it in at once): the transaction stores it
    /// when it ends, or not at all when it is cancelled or throws.
    ///
    /// - Parameter block: The work; neither context may escape it.
    /// - Returns: What `block` returns.
    /// - Throws: ``RepositoryError`` wrapping what `block` threw.
    public func custom<T: Sendable>(
        _ block: @escaping @Sendable (_ parentContext: ObjectContext, _ scratchPad: ObjectContext) throws -> T
    ) async throws(RepositoryError) -> T {
        // In a transaction, what reaches the parent joins the transaction when the block returns.
        try await perform(saving: currentTransaction != nil) { context in
            // In a transaction the call's context is a child of the transaction's: saving the
            // parent joins the transaction instead of reaching the store.
            let result = try block(context, ObjectContext(parent: context))
            return { result }
        }
    }

    /// Runs `block` as one transaction: every repository call it makes (directly, in functions
    /// it calls, or in child tasks) joins one context, which is saved once when `block`
    /// returns, with `transactionAuthor` (the calls' own authors are ignored).
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.withTransaction(transactionAuthor: "import") { transaction in
    ///     _ = try await repository.create(heat)
    ///     _ = try await repository.create(ronin)
    ///     if shouldAbandon { transaction.cancel() }   // nothing is stored; the block's result is still returned
    /// }
    /// ```
    ///
    /// - If `block` throws, nothing it wrote is stored, and the error is rethrown. A joined
    ///   block (a nested `withTransaction`, or one `continuing:` the transaction) that throws
    ///   abandons the whole transaction even when its caller catches the error: the outermost
    ///   call then stores nothing and throws that error.
    /// - ``Transaction/cancel()`` stores nothing, and the block's result is returned.
    /// - A call of `withTransaction` inside another one's block joins it (only the outermost
    ///   saves). `continuing:` rejoins a transaction where ``Transaction/current`` does not
    ///   reach, such as a detached task started from the block. Transactions of other
    ///   containers' repositories run alongside, each with its own calls.
    /// - A unique-constraint clash fails the call that makes it, as outside a transaction.
    /// - Batch requests (``insert(_:transactionAuthor:)`` and its siblings) write to the store
    ///   at once, as in Core Data: they are not undone with the transaction.
    ///
    /// - Parameters:
    ///   - existingTransaction: A transaction to join instead of starting one.
    ///   - transactionAuthor: The author the transaction's save records.
    ///   - isolation: Where `block` runs (the caller's isolation).
    ///   - block: The work.
    /// - Returns: What `block` returns.
    /// - Throws: What `block` throws, or a ``RepositoryError`` when the save fails (a
    ///   unique-constraint clash among the transaction's writes, say).
    public func withTransaction<T>(
        continuing existingTransaction: Transaction? = nil, transactionAuthor: TransactionAuthor? = nil,
        isolation: isolated (any Actor)? = #isolation, _ block: (Transaction) async throws -> T
    ) async throws -> T {
        if let existingTransaction, existingTransaction.container !== container {
            throw RepositoryError(
                .foreignTransaction,
                "The transaction to continue writes to another container's stores; continue it with a repository of that container.")
        }
        let running = Transaction.running.filter { $0.container !== container }
        if let transaction = existingTransaction ?? currentTransaction {
            do {
                return try await Transaction.$running.withValue(
                    running + [transaction], operation: { try await block(transaction) })
            } catch {
                // A joined block that throws abandons the whole transaction.
                transaction.abandon(because: error)
                throw error
            }
        }
        let transaction = Transaction(container: container, transactionAuthor: transactionAuthor)
        let result: T
        do {
            result = try await Transaction.$running.withValue(running + [transaction], operation: { try await block(transaction) })
        } catch {
            try? await transaction.finish(saving: false)
            throw error
        }
        if let error = transaction.abandonedBy {
            try? await transaction.finish(saving: false)
            throw error
        }
        do {
            try await transaction.finish(saving: true)
        } catch {
            throw RepositoryError(error)
        }
        return result
    }
}
