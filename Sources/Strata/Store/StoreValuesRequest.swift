import Foundation

/// A fetch of property values and aggregates instead of objects: Core Data's dictionary
/// result type, `propertiesToGroupBy` and aggregate expressions.
public struct StoreValuesRequest: Sendable {
    /// One column of the result.
    public typealias Column = ResultColumn

    /// Which rows, in what order, how many.
    public var plan: FetchPlan
    /// The result columns.
    public var columns: [Column]
    /// Key paths to group by; each result row is one group.
    public var groupBy: [String]
    /// Whether duplicate result rows are left out.
    public var returnsDistinctResults: Bool

    /// Creates a values request.
    public init(
        plan: FetchPlan, columns: [Column], groupBy: [String] = [], returnsDistinctResults: Bool = false
    ) {
        self.plan = plan
        self.columns = columns
        self.groupBy = groupBy
        self.returnsDistinctResults = returnsDistinctResults
    }
}
