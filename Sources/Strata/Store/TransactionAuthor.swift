import Foundation

/// Who wrote a transaction: the name persistent history records with each save and batch
/// request, so that readers can tell their own changes from everyone else's.
///
/// Authors are plain names, usable as string literals. Declare one per writer of a store — the
/// view context of each app or process, and each kind of background work:
///
/// ```swift
/// extension TransactionAuthor {
///     static let app: TransactionAuthor = "app"
///     static let widget: TransactionAuthor = "widget"
///     static let networkSync: TransactionAuthor = "networkSync"
/// }
///
/// context.transactionAuthor = .networkSync
/// try await container.performBackgroundTask(author: .networkSync) { context in … }
/// ```
///
/// This is the data-stack kit's `TransactionAuthor`; Core Data's `transactionAuthor` is its
/// ``name``.
public struct TransactionAuthor: Sendable, Hashable, Codable, ExpressibleByStringInterpolation,
    CustomStringConvertible
{
    /// The name recorded in history.
    public var name: String

    /// An author named `name`.
    public init(_ name: String) { self.name = name }

    /// An author named by a string literal.
    public init(stringLiteral name: String) { self.name = name }

    /// An author named by an interpolated string literal (`"worker \(index)"`).
    public init(stringInterpolation: DefaultStringInterpolation) { self.name = String(stringInterpolation: stringInterpolation) }

    /// The author of a container's ``PersistentContainer/viewContext`` unless the app sets
    /// another: `"viewContext"`. Processes that share a store should each give their view
    /// context an author of their own, so that their history trackers can tell them apart.
    public static let viewContext: TransactionAuthor = "viewContext"

    /// The name.
    public var description: String { name }

    /// Decodes an author from a single string.
    public init(from decoder: any Decoder) throws {
        name = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the author as a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
