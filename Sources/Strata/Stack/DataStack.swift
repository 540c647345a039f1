import Foundation

/// A type that wraps a ``PersistentContainer`` and hands out contexts set up for persistent
/// history: the data-stack kit's `DataStack`.
///
/// ```swift
/// extension TransactionAuthor {
///     static let iOSViewContext: TransactionAuthor = "iOSViewContext"
///     static let cloudDataImport: TransactionAuthor = "cloudDataImport"
/// }
///
/// let stack: any DataStack = try BasicDataStack(schema, name: "Movies", mainAuthor: .iOSViewContext)
/// let viewContext = await stack.viewContext          // author iOSViewContext, named "ViewContext"
/// let importer = stack.backgroundContext(author: .cloudDataImport)
/// ```
///
/// Every context's saves carry its author, so a ``PersistentHistoryTracker`` (or anyone reading
/// ``PersistentContainer/fetchHistory(_:)``) can tell who wrote what. Strata ships three stacks:
/// ``BasicDataStack`` (an SQLite file), ``PreviewStack`` (in memory) and ``TestingStack`` (a
/// fresh file per test); conform your own type to wrap a container set up differently.
public protocol DataStack: Sendable {
    /// The container the stack wraps.
    var container: PersistentContainer { get }

    /// The author of the stack's view context, and so of the app's or target's own saves.
    var mainContextAuthor: TransactionAuthor { get }
}

extension DataStack {
    /// The container's view context, named `"ViewContext"`, with ``mainContextAuthor`` as its
    /// transaction author.
    ///
    /// Leave its ``ObjectContext/name`` and ``ObjectContext/transactionAuthor`` as the stack set
    /// them: history tracking relies on them.
    @MainActor public var viewContext: ObjectContext {
        let context = container.viewContext
        context.name = "ViewContext"
        context.transactionAuthor = mainContextAuthor
        return context
    }

    /// A new context for the caller's isolation domain, named after `author` and saving as
    /// `author`.
    ///
    /// For example:
    ///
    /// ```swift
    /// Task.detached {
    ///     let context = stack.backgroundContext(author: .cloudDataImport)
    ///     try importer.run(in: context)
    /// }
    /// ```
    ///
    /// - Precondition: `author` is not ``mainContextAuthor``: a background context that saved as
    ///   the view context would hide its changes from the app's own history tracker. The kit
    ///   asserts this in debug builds; Strata checks it in every build.
    public func backgroundContext(author: TransactionAuthor) -> ObjectContext {
        precondition(
            author != mainContextAuthor,
            "A background context cannot use the view context's author '\(author)': its saves would be skipped by the stack's history tracker. Give it an author of its own.")
        let context = container.newBackgroundContext()
        context.transactionAuthor = author
        context.name = author.name
        return context
    }
}
