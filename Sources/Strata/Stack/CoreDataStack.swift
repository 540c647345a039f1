import Foundation

/// Anything that hands out a context to work in: the stack kit's `CoreDataStack`.
///
/// Code written against the protocol does not care how the stack was set up; it asks for the
/// stack's ``context``, and for sibling stacks on the same stores when work moves to another
/// isolation domain.
///
/// ```swift
/// func importMovies(_ rows: [MovieRow], into stack: some CoreDataStack) throws {
///     try stack.performAndWait { context in
///         for row in rows { Movie(context: context).title = row.title }
///         try context.save()
///     }
/// }
///
/// let stack = try DefaultCoreDataStack(modelName: "Movies", modelBundle: .module)
/// let background = stack.createBackgroundStack()
/// Task.detached { try importMovies(rows, into: background) }
/// ```
///
/// A stack owns a context, so it belongs to one isolation domain, as its context does. Sibling
/// stacks come back `sending`, ready to move to the task or actor that will use them.
public protocol CoreDataStack {
    /// The stack's context.
    var context: ObjectContext { get }

    /// A stack with a new context on the same stores, for work off the main actor.
    ///
    /// For example:
    ///
    /// ```swift
    /// let background = stack.createBackgroundStack()
    /// Task.detached {
    ///     try background.performAndWait { context in
    ///         Movie(context: context).title = "Heat"
    ///         try context.save()
    ///     }
    /// }
    /// ```
    func createBackgroundStack() -> sending any CoreDataStack

    /// A stack with a new context on the same stores, for the main actor.
    ///
    /// For example:
    ///
    /// ```swift
    /// let main = stack.createMainStack()
    /// Task { @MainActor in
    ///     print(try main.context.fetch(Movie.self).count)
    /// }
    /// ```
    func createMainStack() -> sending any CoreDataStack
}

extension CoreDataStack {
    /// The kit's spelling of ``createBackgroundStack()``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let background = stack.createBackgrondStack()   // warns: renamed to createBackgroundStack()
    /// ```
    @available(*, deprecated, renamed: "createBackgroundStack()")
    public func createBackgrondStack() -> sending any CoreDataStack { createBackgroundStack() }

    /// Runs `handler` with the stack's context.
    ///
    /// Core Data schedules the block on the context's queue and returns at once; a Strata
    /// context belongs to the caller's isolation domain, so the handler runs right away, before
    /// `perform` returns. Nothing needs scheduling: this exists so that code written against the
    /// kit ports unchanged.
    ///
    /// For example:
    ///
    /// ```swift
    /// stack.perform { context in
    ///     Movie(context: context).title = "Heat"
    ///     try? context.save()
    /// }
    /// ```
    public func perform(_ handler: (ObjectContext) -> Void) {
        handler(context)
    }

    /// Runs `handler` with the stack's context and returns its result (Core Data's
    /// `performAndWait`, which waits for the context's queue; here the context is already the
    /// caller's).
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = try stack.performAndWait { context in try context.count(for: Movie.self) }
    /// ```
    ///
    /// - Returns: What `handler` returns.
    /// - Throws: What `handler` throws.
    public func performAndWait<Result>(_ handler: (ObjectContext) throws -> Result) rethrows -> Result {
        try handler(context)
    }
}
