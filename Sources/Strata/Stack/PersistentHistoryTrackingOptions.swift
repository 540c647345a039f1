import Foundation

/// How a stack sets up persistent history tracking: the data-stack kit's
/// `PersistentHistoryTrackingOptions`.
///
/// Giving options to ``BasicDataStack`` turns history on in its store and creates and starts a
/// ``PersistentHistoryTracker`` for the stack's main author; without them the view context
/// merges other contexts' saves by itself.
///
/// ```swift
/// let stack = try BasicDataStack(
///     schema, name: "Movies", mainAuthor: .iOSViewContext,
///     persistentHistoryOptions: .init(maxTransactionAge: 3 * 24 * 3600))
/// ```
///
/// The kit's custom fetcher, merger, cleaner, timestamp manager and logger are not options
/// here: Strata's tracker reads history itself, records its position in the store, and takes
/// more merge targets through ``PersistentHistoryTracker/addMergeTarget(_:)``.
public struct PersistentHistoryTrackingOptions: Sendable, Hashable {
    /// How old history must be before the tracker prunes it; a week when `nil`.
    public var maxTransactionAge: TimeInterval?
    /// How often the store looks for other processes' commits while the tracker runs.
    public var remoteChangePollingInterval: Duration?
    /// Whether the tracker merges other authors' transactions into the view context.
    public var mergesIntoViewContext: Bool
    /// Which history the tracker deletes after merging (Strata's default, or the kit's rule).
    public var pruningRule: HistoryPruningRule

    /// Creates options.
    ///
    /// For example:
    ///
    /// ```swift
    /// let options = PersistentHistoryTrackingOptions(
    ///     maxTransactionAge: 24 * 3600, remoteChangePollingInterval: .seconds(1), pruningRule: .mergedByEveryAuthorOrOld)
    /// ```
    ///
    /// - Parameters:
    ///   - maxTransactionAge: How old history must be before pruning; a week when `nil`.
    ///   - remoteChangePollingInterval: How often to look for other processes' commits; every
    ///     250 ms by default, `nil` for never.
    ///   - mergesIntoViewContext: Whether to merge into the view context; `true` by default.
    ///   - pruningRule: Which history to delete after merging; Strata's default
    ///     (``HistoryPruningRule/mergedByEveryAuthorOnceOld``) unless given.
    public init(
        maxTransactionAge: TimeInterval? = nil, remoteChangePollingInterval: Duration? = .milliseconds(250),
        mergesIntoViewContext: Bool = true, pruningRule: HistoryPruningRule = .mergedByEveryAuthorOnceOld
    ) {
        self.maxTransactionAge = maxTransactionAge
        self.remoteChangePollingInterval = remoteChangePollingInterval
        self.mergesIntoViewContext = mergesIntoViewContext
        self.pruningRule = pruningRule
    }

    /// A tracker for `container` with these options, starting: it runs as soon as the actor
    /// takes the start, unless ``PersistentHistoryTracker/stopMonitoring()`` came first.
    func startedTracker(container: PersistentContainer, currentAuthor: TransactionAuthor) -> PersistentHistoryTracker {
        let tracker = PersistentHistoryTracker(
            container: container, currentAuthor: currentAuthor, maxTransactionAge: maxTransactionAge ?? 7 * 24 * 3600,
            remoteChangePollingInterval: remoteChangePollingInterval, mergesIntoViewContext: mergesIntoViewContext,
            pruningRule: pruningRule)
        Task { await tracker.startMonitoringUnlessStopped() }
        return tracker
    }
}
