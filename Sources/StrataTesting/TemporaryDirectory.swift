import Foundation

/// A folder of its own for one test, removed with everything in it when the value is released.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let container = try PersistentContainer(
///     name: "Test", entities: [Movie.self], storeDescriptions: [.sqlite(directory.file("Test.sqlite"))])
/// ```
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates a new, empty folder in the system's temporary folder.
    ///
    /// - Throws: The file system's error when the folder cannot be created.
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The URL of a file named `name` in the folder (the file is not created).
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
