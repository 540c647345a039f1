import Foundation

/// A batch delete as a store runs it: the rows a plan matches, or rows by object ID.
public struct StoreBatchDelete: Sendable {
    /// Which rows.
    public enum Selection: Sendable {
        /// The rows a plan matches (its limit, offset and order apply).
        case plan(FetchPlan)
        /// These objects (IDs of other stores and of missing rows are skipped).
        case objectIDs([ObjectID])
    }

    /// Which rows.
    public var selection: Selection
    /// What to report.
    public var resultType: BatchResultType
    /// The author history records.
    public var author: String?
    /// The context name history records.
    public var contextName: String?

    /// Creates a batch delete.
    public init(
        selection: Selection, resultType: BatchResultType = .statusOnly, author: String? = nil, contextName: String? = nil
    ) {
        self.selection = selection
        self.resultType = resultType
        self.author = author
        self.contextName = contextName
    }
}
