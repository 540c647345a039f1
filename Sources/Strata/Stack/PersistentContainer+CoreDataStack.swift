import Foundation

/// A container is a ``CoreDataStack`` on the main actor, as the stack kit extends
/// `NSPersistentContainer`: its ``context`` is the ``viewContext``.
///
/// ```swift
/// @MainActor func showMovies(in stack: some CoreDataStack) throws -> [Movie] {
///     try stack.context.fetch(Movie.self)
/// }
/// let movies = try showMovies(in: container)        // the view context's movies
/// let background = container.createBackgroundStack()  // a new context, for work elsewhere
/// ```
///
/// The conformance is isolated to the main actor, where the view context lives: code on the
/// main actor uses a container wherever a `CoreDataStack` is wanted; elsewhere, take a stack
/// made by ``createBackgroundStack()``.
extension PersistentContainer: @MainActor CoreDataStack {
    /// The ``viewContext``.
    @MainActor public var context: ObjectContext { viewContext }

    /// A stack with a new context of the container, for work off the main actor (the kit's
    /// `createBackgrondStack()` on a container).
    ///
    /// For example:
    ///
    /// ```swift
    /// let importer = container.createBackgroundStack()
    /// Task.detached {
    ///     try importer.performAndWait { context in
    ///         Movie(context: context).title = "Heat"
    ///         try context.save()
    ///     }
    /// }
    /// ```
    @MainActor public func createBackgroundStack() -> sending any CoreDataStack {
        DefaultCoreDataStack(context: newBackgroundContext())
    }

    /// A stack whose context is the container's ``viewContext``, for the main actor.
    ///
    /// For example:
    ///
    /// ```swift
    /// let main = container.createMainStack()   // main.context === container.viewContext
    /// ```
    @MainActor public func createMainStack() -> sending any CoreDataStack {
        makeMainStack()
    }
}

extension PersistentContainer {
    /// A stack on the view context whose siblings are the container's.
    @MainActor fileprivate func makeMainStack() -> sending any CoreDataStack {
        AnyCoreDataStack(
            context: viewContext,
            createBackgroundStackHandler: { [self] in DefaultCoreDataStack(context: newBackgroundContext()) },
            createMainStackHandler: { [self] in makeMainStack() })
    }
}
