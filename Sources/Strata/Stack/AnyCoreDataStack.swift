import Foundation

/// A ``CoreDataStack`` made of a context and two closures: the stack kit's type-erased
/// `AnyCoreDataStack`.
///
/// ```swift
/// let stack = AnyCoreDataStack(
///     context: container.newBackgroundContext(),
///     createBackgroundStackHandler: { DefaultCoreDataStack(container: container) },
///     createMainStackHandler: { DefaultCoreDataStack(container: container) })
/// ```
open class AnyCoreDataStack: CoreDataStack {
    /// The stack's context.
    public let context: ObjectContext
    /// Makes the stack ``createBackgroundStack()`` returns.
    public let createBackgroundStackHandler: () -> sending any CoreDataStack
    /// Makes the stack ``createMainStack()`` returns.
    public let createMainStackHandler: () -> sending any CoreDataStack

    /// Creates a stack from a context and the closures that make its siblings.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = AnyCoreDataStack(
    ///     context: container.newBackgroundContext(),
    ///     createBackgroundStackHandler: { DefaultCoreDataStack(container: container) },
    ///     createMainStackHandler: { DefaultCoreDataStack(container: container) })
    /// ```
    public init(
        context: ObjectContext, createBackgroundStackHandler: @escaping () -> sending any CoreDataStack,
        createMainStackHandler: @escaping () -> sending any CoreDataStack
    ) {
        self.context = context
        self.createBackgroundStackHandler = createBackgroundStackHandler
        self.createMainStackHandler = createMainStackHandler
    }

    /// The kit's spelling of ``init(context:createBackgroundStackHandler:createMainStackHandler:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// // Compiles, with a warning to rename the label to createBackgroundStackHandler:
    /// let stack = AnyCoreDataStack(
    ///     context: context, createBackgrondStackHandler: { DefaultCoreDataStack(container: container) },
    ///     createMainStackHandler: { DefaultCoreDataStack(container: container) })
    /// ```
    @available(*, deprecated, renamed: "init(context:createBackgroundStackHandler:createMainStackHandler:)")
    public convenience init(
        context: ObjectContext, createBackgrondStackHandler: @escaping () -> sending any CoreDataStack,
        createMainStackHandler: @escaping () -> sending any CoreDataStack
    ) {
        self.init(
            context: context, createBackgroundStackHandler: createBackgrondStackHandler,
            createMainStackHandler: createMainStackHandler)
    }

    /// Calls ``createBackgroundStackHandler``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let background = stack.createBackgroundStack()   // what createBackgroundStackHandler makes
    /// ```
    open func createBackgroundStack() -> sending any CoreDataStack { createBackgroundStackHandler() }

    /// Calls ``createMainStackHandler``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let main = stack.createMainStack()   // what createMainStackHandler makes
    /// ```
    open func createMainStack() -> sending any CoreDataStack { createMainStackHandler() }
}

@available(*, unavailable, message: "A stack owns a context, which belongs to one isolation domain.")
extension AnyCoreDataStack: Sendable {}
