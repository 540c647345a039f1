import Foundation

/// A model class with a default order, for ``DefaultSortable/sortedFetchRequest``.
///
/// ```swift
/// extension Movie: DefaultSortable {
///     static var defaultSortDescriptors: [FetchSortDescriptor<Movie>] { [.ascending(\.title)] }
/// }
/// let all = try context.fetch(Movie.sortedFetchRequest)
/// ```
public protocol DefaultSortable: PersistentModel {
    /// The order objects of this class are listed in when nothing else is asked for.
    static var defaultSortDescriptors: [FetchSortDescriptor<Self>] { get }
}

extension DefaultSortable {
    /// A request for every object, in the class's default order.
    public static var sortedFetchRequest: FetchRequest<Self> {
        FetchRequest(sortDescriptors: defaultSortDescriptors)
    }

    /// A request for the objects matching `predicate`, in the class's default order.
    ///
    /// For example:
    ///
    /// ```swift
    /// extension Movie: DefaultSortable {
    ///     static var defaultSortDescriptors: [FetchSortDescriptor<Movie>] { [.ascending(\.title)] }
    /// }
    /// let recent = try context.fetch(Movie.sortedFetchRequest(where: \.year >= 2000))   // by title
    /// ```
    public static func sortedFetchRequest(where predicate: FetchPredicate<Self>) -> FetchRequest<Self> {
        FetchRequest(predicate: predicate, sortDescriptors: defaultSortDescriptors)
    }
}
