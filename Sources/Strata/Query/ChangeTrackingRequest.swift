import Foundation

/// A request that names the entity whose saved changes re-run a subscription: every
/// ``FetchRequest`` is one, whatever its model class.
///
/// Repository subscriptions take one as their `changeTrackingRequest:` (the repository kit's
/// parameter), for results that depend on related objects:
///
/// ```swift
/// let totals = repository.sumSubscription(
///     \Movie.boxOffice, where: try FetchPredicate(format: "ANY reviews.stars >= 4"),
///     changeTrackingRequest: FetchRequest<Review>())
/// ```
public protocol ChangeTrackingRequest: Sendable {
    /// The entity whose changes count.
    var entityName: String { get }
    /// Whether changes to objects of its subentities count too.
    var includesSubentities: Bool { get }
}

extension FetchRequest: ChangeTrackingRequest {}
