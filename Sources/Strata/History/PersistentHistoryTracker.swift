import Foundation

/// Keeps a container up to date with what other writers of its stores did, from persistent
/// history: the data-stack kit's `PersistentHistoryTracker`.
///
/// Several writers share a store — an app and its widget, an importer process and an API
/// server, two containers in one process — each with its own ``TransactionAuthor``. A tracker
/// belongs to one of them (its ``currentAuthor``). Once started, it reads the transactions of
/// *other* authors since the last one it merged, merges them into the container's
/// ``PersistentContainer/viewContext`` (and into any context registered with
/// ``addMergeTarget(_:)``), and records how far it got in the store itself, per author, so that
/// a restart resumes there. It then prunes the history that every known author has merged and
/// that is older than ``maxTransactionAge``: a lagging author never loses a transaction it has
/// not read.
///
/// ```swift
/// let container = try PersistentContainer(
///     name: "Movies", entities: [Movie.self],
///     storeDescriptions: [.sqlite(url, persistentHistoryTracking: true)])
/// await MainActor.run { container.viewContext.transactionAuthor = "app" }
/// let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app")
/// await tracker.startMonitoring()
/// ```
///
/// The tracker wakes on every commit of the container's stores by another author — those of
/// this process at once, those of other processes when the store's polling notices them
/// (``StoreDescription/remoteChangePollingInterval``; the tracker starts polling every
/// ``remoteChangePollingInterval`` unless told not to). Only stores that record history
/// (``StoreDescription/isPersistentHistoryTrackingEnabled``) are tracked.
///
/// An author that stops reading for good holds pruning back; remove it with
/// ``forgetAuthor(_:)``, or prune by the kit's rule (``HistoryPruningRule/mergedByEveryAuthorOrOld``),
/// which deletes history older than ``maxTransactionAge`` whoever has not read it.
///
/// When history this tracker had not merged yet was pruned (by another writer's rule, or by
/// hand), what changed meanwhile is unknown: the tracker merges a remote change (every object
/// of the view context and of the merge targets is refreshed), goes on from the oldest
/// transaction left, and records ``StrataError/Code/historyTokenExpired`` in ``lastError``.
public actor PersistentHistoryTracker {
    /// The container whose stores are tracked.
    public nonisolated let container: PersistentContainer
    /// The author whose transactions this tracker never merges: the view context's author in
    /// this app or process.
    public nonisolated let currentAuthor: TransactionAuthor
    /// How old history must be before pruning may delete it (once every author merged it).
    /// A week by default; `0` prunes whatever every author has merged.
    public var maxTransactionAge: TimeInterval
    /// How often the stores look for other processes' commits while the tracker runs; `nil`
    /// leaves their polling as their descriptions set it.
    public nonisolated let remoteChangePollingInterval: Duration?
    /// Whether merged transactions reach the container's view context.
    public nonisolated let mergesIntoViewContext: Bool
    /// Which history the tracker deletes after merging.
    public var pruningRule: HistoryPruningRule
    /// The last error met while processing in the background, if any (processing goes on at
    /// the next commit).
    public private(set) var lastError: (any Error)?

    private var mergeTargets: [UUID: @Sendable (ContextChanges) async -> Void] = [:]
    private var observation: StoreObservation?
    private var worker: Task<Void, Never>?
    /// Whether ``stopMonitoring()`` was ever called: a start a stack scheduled then is dropped.
    private var wasStopped = false
    private var lastPruning: Date?
    /// The last transaction merged, by store identifier.
    private var lastTokens: [String: HistoryToken] = [:]
    private var loadedTokens = false

    /// Creates a tracker for `container`; call ``startMonitoring()`` to start it.
    ///
    /// For example:
    ///
    /// ```swift
    /// // An importer process: it merges into a background context of its own, not the view context.
    /// let tracker = PersistentHistoryTracker(
    ///     container: container, currentAuthor: "importer", maxTransactionAge: 24 * 3600,
    ///     remoteChangePollingInterval: .seconds(1), mergesIntoViewContext: false)
    /// ```
    ///
    /// - Parameters:
    ///   - container: The container to keep up to date.
    ///   - currentAuthor: This writer's author (give the view context the same one).
    ///   - maxTransactionAge: How old history must be before pruning may delete it.
    ///   - remoteChangePollingInterval: How often the stores look for other processes'
    ///     commits while the tracker runs; `nil` leaves polling as the store descriptions set it.
    ///   - mergesIntoViewContext: Whether to merge into the view context (on the main actor).
    ///   - pruningRule: Which history to delete after merging; by default what every author
    ///     merged, once older than `maxTransactionAge`.
    public init(
        container: PersistentContainer, currentAuthor: TransactionAuthor,
        maxTransactionAge: TimeInterval = 7 * 24 * 3600, remoteChangePollingInterval: Duration? = .milliseconds(250),
        mergesIntoViewContext: Bool = true, pruningRule: HistoryPruningRule = .mergedByEveryAuthorOnceOld
    ) {
        self.container = container
        self.currentAuthor = currentAuthor
        self.maxTransactionAge = maxTransactionAge
        self.remoteChangePollingInterval = remoteChangePollingInterval
        self.mergesIntoViewContext = mergesIntoViewContext
        self.pruningRule = pruningRule
    }

    /// Whether the tracker is running.
    public var isMonitoring: Bool { worker != nil }

    /// Starts tracking: merges what other authors did since the last run, then follows every
    /// commit. Calling it again does nothing.
    ///
    /// For example:
    ///
    /// ```swift
    /// let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app")
    /// await tracker.startMonitoring()   // merges what the widget saved meanwhile, then follows each commit
    /// ```
    public func startMonitoring() {
        guard worker == nil else { return }
        let (wakeUps, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let ownAuthor = currentAuthor.name
        observation = container.addCommitObserver { commit in
            // Our own commits have nothing for us; everyone else's may.
            if commit.author != ownAuthor { wake.yield() }
        }
        if let interval = remoteChangePollingInterval {
            for store in container.historyTrackingStores { store.startPollingForRemoteChanges(every: interval) }
        }
        wake.yield()  // what happened while we were away
        worker = Task { [weak self] in
            for await _ in wakeUps {
                guard let self, !Task.isCancelled else { return }
                await self.processInBackground()
            }
        }
    }

    /// Starts tracking unless someone stopped the tracker first: the start a data stack
    /// schedules when it creates its tracker.
    func startMonitoringUnlessStopped() {
        guard !wasStopped else { return }
        startMonitoring()
    }

    /// Stops tracking. Transactions committed meanwhile are merged after the next
    /// ``startMonitoring()``.
    ///
    /// For example:
    ///
    /// ```swift
    /// await tracker.stopMonitoring()    // the app goes to the background
    /// await tracker.startMonitoring()   // back: merges what other authors saved meanwhile
    /// ```
    public func stopMonitoring() {
        wasStopped = true
        observation?.cancel()
        observation = nil
        worker?.cancel()
        worker = nil
    }

    /// Also merges into another context: `merge` receives each transaction's changes and
    /// merges them where the context lives.
    ///
    /// For example:
    ///
    /// ```swift
    /// actor Importer {
    ///     let context: ObjectContext
    ///     init(container: PersistentContainer) { context = container.newBackgroundContext() }
    ///     func merge(_ changes: ContextChanges) { context.mergeChanges(from: changes) }
    /// }
    /// let importer = Importer(container: container)
    /// let registration = await tracker.addMergeTarget { await importer.merge($0) }
    /// ```
    ///
    /// - Returns: An identifier for ``removeMergeTarget(_:)``.
    @discardableResult
    public func addMergeTarget(_ merge: @escaping @Sendable (ContextChanges) async -> Void) -> UUID {
        let id = UUID()
        mergeTargets[id] = merge
        return id
    }

    /// Stops merging into a context added with ``addMergeTarget(_:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let target = await tracker.addMergeTarget { changes in print(changes.insertedObjectIDs.count, "new objects") }
    /// await tracker.removeMergeTarget(target)
    /// ```
    public func removeMergeTarget(_ id: UUID) {
        mergeTargets[id] = nil
    }

    /// Merges the transactions of other authors committed since the last one merged, records
    /// the new position, and prunes when due. The tracker does this by itself while it runs;
    /// call it to catch up at a moment of your choosing.
    ///
    /// For example:
    ///
    /// ```swift
    /// let merged = try await tracker.processNewTransactions()   // now, rather than at the next commit
    /// print("merged \(merged.count) transactions")
    /// ```
    ///
    /// - Returns: The transactions merged, oldest first.
    /// - Throws: ``StrataError`` when history cannot be read or the position not recorded.
    @discardableResult
    public func processNewTransactions() async throws -> [HistoryTransaction] {
        // One pass at a time: a pass suspends while merging, and a second one running meanwhile
        // would merge the same transactions and could record an older position last.
        let previous = processing
        let pass = Task { () async throws -> [HistoryTransaction] in
            _ = await previous?.result
            return try await self.processOnce()
        }
        processing = pass
        return try await pass.value
    }

    /// The pass running or last run by ``processNewTransactions()``.
    private var processing: Task<[HistoryTransaction], any Error>?

    private func processOnce() async throws -> [HistoryTransaction] {
        try loadTokensIfNeeded()
        var merged: [HistoryTransaction] = []
        for store in container.historyTrackingStores {
            // Everything up to the store's newest transaction, read first, is either in the
            // fetch below or this tracker's own: the position may move past it either way.
            let head = try store.currentHistoryToken()
            let transactions: [HistoryTransaction]
            var refreshesEverything = false
            do {
                transactions = try store.fetchHistory(
                    HistoryFetchRequest(after: lastTokens[store.identifier], excludedAuthors: [currentAuthor.name]))
            } catch let error as StrataError where error.code == .historyTokenExpired {
                // Transactions this tracker had not merged were pruned: what they changed is
                // unknown, so every target refreshes all it holds, then the rest merges as usual.
                lastError = error
                let position = lastTokens[store.identifier]?.transactionNumber ?? 0
                transactions = try store.fetchHistory(HistoryFetchRequest(excludedAuthors: [currentAuthor.name]))
                    .filter { $0.transactionNumber > position }
                refreshesEverything = true
            }
            let start = HistoryToken(storeIdentifier: store.identifier, transactionNumber: 0)
            let newest = [transactions.last?.token, head, lastTokens[store.identifier]].compactMap { $0 }.max() ?? start
            let summaries =
                (refreshesEverything ? [ContextChanges(name: .didSave, isRemoteChange: true)] : [])
                + transactions.map { $0.objectIDNotification() }
            if !summaries.isEmpty {
                if mergesIntoViewContext {
                    // One hop to the main actor for the whole batch, merged in commit order.
                    await MainActor.run { [container] in
                        for changes in summaries { container.viewContext.mergeChanges(from: changes) }
                    }
                }
                for merge in mergeTargets.values {
                    for changes in summaries { await merge(changes) }
                }
            }
            // A reader that has read nothing yet is known from its first pass (position 0), so
            // that pruning waits for it.
            if newest != lastTokens[store.identifier] || lastTokens[store.identifier] == nil {
                lastTokens[store.identifier] = newest
                // A read-only store keeps the position in memory only.
                if !store.isReadOnly { try store.setLastMergedHistoryToken(newest, forAuthor: currentAuthor.name) }
            }
            merged += transactions
        }
        let due: Bool
        switch pruningRule {
        case .mergedByEveryAuthorOnceOld: due = lastPruning.map { Date().timeIntervalSince($0) >= Self.pruningInterval } ?? true
        case .mergedByEveryAuthorOrOld: due = true
        }
        if due {
            lastPruning = Date()
            try pruneHistory()
        }
        return merged
    }

    /// How often processing prunes at most.
    static let pruningInterval: TimeInterval = 60

    /// Deletes history by ``pruningRule``: by default what every known author has merged and
    /// that is older than ``maxTransactionAge``; by the kit's rule, what every known author has
    /// merged, and whatever is older than ``maxTransactionAge``. Known authors are those whose
    /// position is recorded in the store (every tracker's ``currentAuthor``, once it ran).
    ///
    /// For example:
    ///
    /// ```swift
    /// let deleted = try await tracker.pruneHistory()
    /// ```
    ///
    /// - Returns: The number of transactions deleted.
    /// - Throws: ``StrataError`` when the store cannot be written.
    @discardableResult
    public func pruneHistory() throws -> Int {
        var deleted = 0
        let cutoff = Date().addingTimeInterval(-max(0, maxTransactionAge))
        for store in container.historyTrackingStores where !store.isReadOnly {
            let marks = try store.lastMergedHistoryTokens()
            // Until this tracker has recorded its own position, it has not read anything.
            guard let oldest = marks.values.min(), marks[currentAuthor.name] != nil else { continue }
            // Everything up to and including the oldest position has been merged by everyone.
            let before = HistoryToken(storeIdentifier: store.identifier, transactionNumber: oldest.transactionNumber + 1)
            switch pruningRule {
            case .mergedByEveryAuthorOnceOld:
                deleted += try store.deleteHistory(HistoryDeleteRequest(token: before, date: cutoff))
            case .mergedByEveryAuthorOrOld:
                deleted += try store.deleteHistory(HistoryDeleteRequest(before: before))
                deleted += try store.deleteHistory(HistoryDeleteRequest(before: cutoff))
            }
        }
        return deleted
    }

    /// Stops `author` from holding pruning back: its recorded positions are removed from every
    /// tracked store. A tracker of that author that runs again starts over from the oldest
    /// history left.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await tracker.forgetAuthor("widget")   // the widget is gone: its position no longer holds history back
    /// ```
    public func forgetAuthor(_ author: TransactionAuthor) throws {
        for store in container.historyTrackingStores {
            try store.setLastMergedHistoryToken(nil, forAuthor: author.name)
        }
        if author == currentAuthor { lastTokens = [:] }
    }

    /// The last transaction merged from each tracked store, by store identifier.
    public var lastMergedTokens: [String: HistoryToken] { lastTokens }

    private func loadTokensIfNeeded() throws {
        guard !loadedTokens else { return }
        for store in container.historyTrackingStores {
            if let token = try store.lastMergedHistoryTokens()[currentAuthor.name] {
                lastTokens[store.identifier] = token
            }
        }
        loadedTokens = true
    }

    private func processInBackground() async {
        do {
            try await processNewTransactions()
        } catch {
            lastError = error
        }
    }
}

/// Which history a ``PersistentHistoryTracker`` deletes once it has merged.
///
/// ```swift
/// let tracker = PersistentHistoryTracker(
///     container: container, currentAuthor: "app", maxTransactionAge: 24 * 3600,
///     pruningRule: .mergedByEveryAuthorOrOld)   // the data-stack kit's cleaner
/// ```
public enum HistoryPruningRule: Sendable, Hashable, CaseIterable {
    /// Strata's default: history every known author has merged, once it is older than
    /// ``PersistentHistoryTracker/maxTransactionAge``, checked at most once a minute. An
    /// author that lags never loses a transaction it has not read (it holds pruning back
    /// until it reads, or is forgotten with ``PersistentHistoryTracker/forgetAuthor(_:)``).
    case mergedByEveryAuthorOnceOld
    /// The data-stack kit's rule, after every pass: history every known author has merged, at
    /// once, and any history older than ``PersistentHistoryTracker/maxTransactionAge``,
    /// merged or not. An author that lags longer than that misses transactions: its next read
    /// reports ``StrataError/Code/historyTokenExpired`` (a tracker refreshes everything and
    /// goes on).
    case mergedByEveryAuthorOrOld
}
