import Foundation

/// A ``DataStack`` kept in memory, for previews, playgrounds and examples: the data-stack kit's
/// `PreviewStack`.
///
/// ```swift
/// let stack = try PreviewStack(entities: [Movie.self])
/// let context = await stack.viewContext
/// Movie(context: context).title = "Heat"
/// try context.save()
/// ```
///
/// Nothing is written to disk; the objects are gone when the stack is released. Start from the
/// contents of a bundled store with `contentsOf:`.
public final class PreviewStack: DataStack {
    /// The authors a preview stack's contexts use (the kit's `PreviewStack.Authors`).
    public enum Authors {
        /// The view context's author, ``TransactionAuthor/viewContext``.
        public static let viewContext = TransactionAuthor.viewContext
        /// An author for background work.
        public static let backgroundContext: TransactionAuthor = "backgroundContext"
    }

    /// The stack's container.
    public let container: PersistentContainer
    /// ``TransactionAuthor/viewContext``.
    public let mainContextAuthor: TransactionAuthor = Authors.viewContext

    /// Creates an empty store of `schema` in memory, or a copy of a store file's contents.
    ///
    /// For example:
    ///
    /// ```swift
    /// let sample = Bundle.main.url(forResource: "Sample", withExtension: "sqlite")
    /// let stack = try PreviewStack(try Schema([Movie.self]), contentsOf: sample)
    /// ```
    ///
    /// - Parameters:
    ///   - schema: The model.
    ///   - name: The container's name.
    ///   - storeURL: A Strata store file to start from (`contentsOf:`); it is read, never written.
    /// - Throws: ``StrataError`` when the store cannot be made or the file cannot be read.
    public init(_ schema: Schema, name: String = "Preview", contentsOf storeURL: URL? = nil) throws {
        let description: StoreDescription = storeURL.map { .inMemory(copyOf: $0) } ?? .inMemory
        container = try PersistentContainer(name: name, schema: schema, storeDescriptions: [description])
        container.viewContextMergesAutomatically.withLock { $0 = true }
    }

    /// Creates an empty store in memory for the model made of `entities`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try PreviewStack(entities: [Movie.self], contentsOf: sampleStoreURL)
    /// ```
    ///
    /// - Throws: ``StrataError`` when the schema is invalid.
    public convenience init(entities: [ManagedObject.Type], name: String = "Preview", contentsOf storeURL: URL? = nil)
        throws
    {
        try self.init(Schema.shared(for: entities), name: name, contentsOf: storeURL)
    }
}
