import Foundation

/// A ``DataStack`` over a fresh SQLite file in a temporary folder per test: the data-stack
/// kit's `TestingStack`.
///
/// ```swift
/// @Test func importingTwiceUpdates() throws {
///     let stack = try TestingStack(entities: [Movie.self], testName: "importingTwiceUpdates")
///     defer { try? stack.destroy() }
///     let context = stack.backgroundContext(author: "import")
///     // import twice into context, then expect one movie
/// }
/// ```
///
/// The folder is `<temporary folder>/<bundle identifier or DataStackTesting>/<testName>`, and
/// it is emptied when the stack is created, so a test never sees the data of an earlier run.
/// Two stacks with the same test name must not be open at once: the second wipes the first's
/// files. (The kit prefers a file to an in-memory store in tests because the two behave
/// differently in Core Data; in Strata they behave the same, but a file also exercises locking
/// and reopening.)
public final class TestingStack: DataStack {
    /// The stack's container.
    public let container: PersistentContainer
    /// ``TransactionAuthor/viewContext``.
    public let mainContextAuthor: TransactionAuthor = .viewContext
    /// The folder that holds the store's files.
    public let directoryLocation: URL
    /// The store file's name, without extension.
    public let fileID: UUID
    /// The store's file.
    public var storeURL: URL { directoryLocation.appendingPathComponent(fileID.uuidString).appendingPathExtension("sqlite") }

    /// Creates a fresh store of `schema` for the test named `testName`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try TestingStack(try Schema([Movie.self]), bundle: .module, testName: "deletingAMovieDeletesItsReviews")
    /// ```
    ///
    /// - Parameters:
    ///   - schema: The model.
    ///   - bundle: The bundle whose identifier names the folder of all testing stores.
    ///   - testName: The test's name, which names its folder.
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the folder
    ///   cannot be emptied or made, and the store's errors.
    public init(_ schema: Schema, bundle: Bundle = .main, testName: String) throws {
        directoryLocation = try Self.freshDirectory(name: testName, bundle: bundle)
        fileID = UUID()
        container = try PersistentContainer(
            name: testName, schema: schema,
            storeDescriptions: [
                .sqlite(directoryLocation.appendingPathComponent(fileID.uuidString).appendingPathExtension("sqlite"))
            ])
    }

    /// Creates a fresh store for the model made of `entities`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try TestingStack(entities: [Movie.self, Review.self], testName: "deletingAMovieDeletesItsReviews")
    /// ```
    ///
    /// - Throws: ``StrataError`` when the schema is invalid, the folder cannot be made, or the
    ///   store cannot be opened.
    public convenience init(entities: [ManagedObject.Type], bundle: Bundle = .main, testName: String) throws {
        try self.init(Schema.shared(for: entities), bundle: bundle, testName: testName)
    }

    /// Closes the container and deletes the test's folder.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try TestingStack(entities: [Movie.self], testName: "savingTwiceKeepsOneMovie")
    /// defer { try? stack.destroy() }
    /// ```
    ///
    /// - Throws: ``StrataError`` when the container cannot be closed or the folder removed.
    public func destroy() throws {
        try container.close()
        try StoreLocation.removeFolder(directoryLocation)
    }

    static func freshDirectory(name: String, bundle: Bundle) throws -> URL {
        // A test name is one folder: never a path that leaves the testing folder.
        var folderName = name.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "\0", with: "_")
        if folderName.isEmpty || folderName == "." || folderName == ".." { folderName = "_" + folderName }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(bundle.bundleIdentifier ?? "DataStackTesting", isDirectory: true)
            .appendingPathComponent(folderName, isDirectory: true)
        try StoreLocation.removeFolder(directory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StrataError(
                .storeNotWritable, "Could not create the testing stack's folder \(directory.path): \(error.localizedDescription)",
                fileURL: directory, underlyingError: error)
        }
        return directory
    }
}
