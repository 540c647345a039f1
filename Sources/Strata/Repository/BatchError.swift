import Foundation

/// One item of a non-atomic batch that failed, with its error.
///
/// ```swift
/// let (created, failed) = await repository.create(movies)
/// for failure in failed { print(failure.item.title, failure.error.message) }
/// ```
public struct BatchError<Item: Sendable>: Error, Sendable {
    /// The item that failed (the value, key, object ID or URI the batch was given).
    public let item: Item
    /// Why it failed.
    public let error: RepositoryError

    /// Creates a batch error.
    ///
    /// For example:
    ///
    /// ```swift
    /// let failure = BatchError(item: heat, error: RepositoryError(.objectDeleted, "Heat was deleted."))
    /// ```
    public init(item: Item, error: RepositoryError) {
        self.item = item
        self.error = error
    }

    /// The message of the item's error.
    public var localizedDescription: String { error.message }
}

extension BatchError: Equatable where Item: Equatable {
    /// Same item and same error code.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.item == rhs.item && lhs.error.code == rhs.error.code }
}
