import Foundation

/// A batch update as a store runs it: the rows a plan matches get new attribute values.
public struct StoreBatchUpdate: Sendable {
    /// Which rows.
    public var plan: FetchPlan
    /// The new values, by attribute name.
    public var propertiesToUpdate: [String: BatchUpdateExpression]
    /// What to report.
    public var resultType: BatchResultType
    /// The author history records.
    public var author: String?
    /// The context name history records.
    public var contextName: String?

    /// Creates a batch update.
    public init(
        plan: FetchPlan, propertiesToUpdate: [String: BatchUpdateExpression], resultType: BatchResultType = .statusOnly,
        author: String? = nil, contextName: String? = nil
    ) {
        self.plan = plan
        self.propertiesToUpdate = propertiesToUpdate
        self.resultType = resultType
        self.author = author
        self.contextName = contextName
    }
}
