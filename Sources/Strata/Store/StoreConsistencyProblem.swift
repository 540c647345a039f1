import Foundation

/// A problem ``PersistentStore/checkConsistency()`` found in a store's stored data: damage
/// another program, a crash of the disk or a tool that wrote around Strata could leave.
///
/// ```swift
/// for problem in try container.stores[0].checkConsistency() {
///     print(problem)        // "Movie.director: 3 rows hold the key of an object that does not exist."
/// }
/// ```
public struct StoreConsistencyProblem: Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The database file itself is damaged (SQLite's `integrity_check`).
        case integrity
        /// A table or column the recorded schema needs is missing.
        case schemaMismatch
        /// To-one relationships hold the key of an object that does not exist.
        case danglingToOne
        /// Join-table rows of a to-many relationship name an object that does not exist.
        case orphanedJoinRows
        /// Objects share the values of a uniqueness constraint.
        case uniquenessViolation
        /// Objects have no value for a required attribute.
        case missingRequiredValue
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The entity concerned, when there is one.
    public var entityName: String?
    /// The property (or the constraint's properties, comma-separated) concerned, when there is one.
    public var propertyName: String?
    /// How many rows (or, for uniqueness violations, groups of rows) have the problem.
    public var count: Int
    /// What is wrong, for people.
    public var message: String
    /// Whether ``PersistentStore/repairConsistency()`` fixes it: orphaned join rows are
    /// deleted, dangling optional to-one relationships emptied. Other problems need a person.
    public var isRepairable: Bool

    /// Creates a problem.
    public init(
        kind: Kind, entityName: String? = nil, propertyName: String? = nil, count: Int, message: String,
        isRepairable: Bool
    ) {
        self.kind = kind
        self.entityName = entityName
        self.propertyName = propertyName
        self.count = count
        self.message = message
        self.isRepairable = isRepairable
    }

    /// The message.
    public var description: String { message }
}
