import Foundation
import Observation

/// A ``FetchedResultsController``'s result as an `@Observable` object, for SwiftUI and other
/// code that reads through Observation's `withObservationTracking`.
///
/// Reading ``objects``, ``sections`` or ``lastChange`` registers interest; each batch of changes
/// the controller applies updates them, which re-renders the views that read them.
///
/// ```swift
/// let results = try ObservableFetchedResults(FetchedResultsController(request, context: container.viewContext))
/// // in a SwiftUI view:  List(results.objects) { movie in Text(movie.title) }
/// ```
///
/// It lives in the controller's isolation domain (the main actor, for the ``PersistentContainer/viewContext``).
@Observable
public final class ObservableFetchedResults<Model: ManagedObject> {
    /// The objects of the result, in order.
    public private(set) var objects: [Model]
    /// The result's sections.
    public private(set) var sections: [FetchedResultsSection<Model>]
    /// The most recent batch of changes, or `nil` before the first.
    public private(set) var lastChange: FetchedResultsChange?
    /// The controller whose result this is.
    @ObservationIgnored public let controller: FetchedResultsController<Model>

    /// Wraps `controller`, fetching its result first if it has not been fetched.
    ///
    /// For example:
    ///
    /// ```swift
    /// let controller = FetchedResultsController(FetchRequest<Movie>(), context: context, sectionBy: \.year)
    /// let results = try ObservableFetchedResults(controller)   // no performFetch() needed
    /// results.sections.map(\.name)
    /// ```
    ///
    /// - Throws: The errors of ``FetchedResultsController/performFetch()``.
    public init(_ controller: FetchedResultsController<Model>) throws {
        if controller.entity == nil { try controller.performFetch() }
        self.controller = controller
        self.objects = controller.fetchedObjects
        self.sections = controller.sections
        controller.changeHandler = { [weak self] change in
            guard let self else { return }
            self.objects = self.controller.fetchedObjects
            self.sections = self.controller.sections
            self.lastChange = change
        }
    }
}

@available(*, unavailable, message: "The results belong to their context's isolation domain.")
extension ObservableFetchedResults: Sendable {}
