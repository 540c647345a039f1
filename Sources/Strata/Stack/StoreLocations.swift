import Foundation

/// The folder the store-location helpers use when given none; `nil` until an app sets it.
private let customDefaultStoreDirectory = LockedBox<URL?>(nil)

/// Store locations by convention, as the stack kit keeps them: every store in a folder of its
/// own, `<base>/CoreDataStores/<configuration or Default>/<name>/<name>.<extension>`, so that a
/// store's files (`-wal`, `-shm`, external data) stay together and one store can be deleted by
/// deleting its folder.
///
/// ```swift
/// let url = try SQLiteStore.url(forStoreName: "Movies")   // creates the store's folder
/// // ~/.local/share/CoreDataStores/Default/Movies/Movies.sqlite on Linux
/// let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [.sqlite(url)])
/// try SQLiteStore.delete(forStoreName: "Movies")   // after closing the container
/// ```
///
/// The helpers are static members of every store type (`SQLiteStore.url(forStoreName:)` where
/// the kit writes `NSPersistentStore.url(forStoreName:)`), with the kit's meanings: every `in:`
/// folder is the base under which `CoreDataStores` goes, and the folders a call names are
/// created. They never open a store.
extension PersistentStore {
    /// The folder under which stores are placed unless a call names another: the platform's
    /// application-support folder (`$XDG_DATA_HOME`, or `~/.local/share`, on Linux), or what
    /// the app set at launch.
    ///
    /// Setting it affects every store type and every later call, from any thread.
    public static var defaultDirectory: URL {
        get { StoreLocation.defaultDirectory }
        set { StoreLocation.defaultDirectory = newValue }
    }

    /// The folder that holds all stores placed by convention, `CoreDataStores` in `directory`
    /// (by default ``defaultDirectory``), created if it does not exist (as the stack kit's
    /// `commonDirectory(in:)` does).
    ///
    /// For example:
    ///
    /// ```swift
    /// let stores = try SQLiteStore.commonDirectory()   // <defaultDirectory>/CoreDataStores
    /// ```
    ///
    /// - Parameter directory: The base folder (by default ``defaultDirectory``).
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the folder
    ///   cannot be created.
    public static func commonDirectory(in directory: URL = defaultDirectory) throws -> URL {
        try StoreLocation.createFolder(StoreLocation.commonDirectory(in: directory))
    }

    /// The folder of the store named `storeName` in `configurationName` (`Default` when `nil`),
    /// `<directory>/CoreDataStores/<configuration or Default>/<storeName>`, created if it does
    /// not exist (the stack kit's `directory(forStoreName:configurationName:in:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let folder = try SQLiteStore.directory(forStoreName: "Movies", in: applicationSupport)
    /// // applicationSupport/CoreDataStores/Default/Movies
    /// ```
    ///
    /// - Parameters:
    ///   - storeName: The store's name.
    ///   - configurationName: The configuration whose entities the store holds; `nil` for the
    ///     default one.
    ///   - directory: The base folder, under which `CoreDataStores` goes (by default
    ///     ``defaultDirectory``).
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the folder
    ///   cannot be created.
    public static func directory(
        forStoreName storeName: String, configurationName: String? = nil, in directory: URL = defaultDirectory
    ) throws -> URL {
        try StoreLocation.createFolder(
            StoreLocation.directory(forStoreName: storeName, configurationName: configurationName, in: directory))
    }

    /// The file of the store named `storeName`, `<store's folder>/<storeName>.<fileExtension>`;
    /// the store's folder is created if it does not exist (the stack kit's
    /// `url(forStoreName:configurationName:withExtension:in:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let url = try SQLiteStore.url(forStoreName: "Movies")
    /// // <defaultDirectory>/CoreDataStores/Default/Movies/Movies.sqlite
    /// ```
    ///
    /// - Parameters:
    ///   - storeName: The store's name.
    ///   - configurationName: Its configuration; `nil` for the default one.
    ///   - fileExtension: The file's extension, `sqlite` by default.
    ///   - directory: The base folder, under which `CoreDataStores` goes (by default
    ///     ``defaultDirectory``).
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the store's
    ///   folder cannot be created.
    public static func url(
        forStoreName storeName: String, configurationName: String? = nil, withExtension fileExtension: String = "sqlite",
        in directory: URL = defaultDirectory
    ) throws -> URL {
        _ = try self.directory(forStoreName: storeName, configurationName: configurationName, in: directory)
        return StoreLocation.url(
            forStoreName: storeName, configurationName: configurationName, withExtension: fileExtension, in: directory)
    }

    /// Deletes the folder of the store named `storeName`, and so every file of it. Close every
    /// container that has the store open first.
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.close()
    /// try SQLiteStore.delete(forStoreName: "Movies")
    /// ```
    ///
    /// - Parameters:
    ///   - storeName: The store's name.
    ///   - configurationName: Its configuration; `nil` for the default one.
    ///   - directory: The base folder, under which `CoreDataStores` goes (by default
    ///     ``defaultDirectory``).
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the folder
    ///   exists and cannot be removed. A folder that does not exist is not an error.
    public static func delete(forStoreName storeName: String, configurationName: String? = nil, in directory: URL = defaultDirectory) throws {
        try StoreLocation.removeFolder(
            StoreLocation.directory(forStoreName: storeName, configurationName: configurationName, in: directory))
    }

    /// Deletes the `CoreDataStores` folder in `directory` (by default ``defaultDirectory``) and
    /// every store in it. Close every container that has one of them open first.
    ///
    /// For example:
    ///
    /// ```swift
    /// try SQLiteStore.deleteAll(in: testFolder)   // testFolder/CoreDataStores and every store in it
    /// ```
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when it exists and
    ///   cannot be removed.
    public static func deleteAll(in directory: URL = defaultDirectory) throws {
        try StoreLocation.removeFolder(StoreLocation.commonDirectory(in: directory))
    }
}

/// The conventions behind the store-location helpers, callable without a store type.
enum StoreLocation {
    static var defaultDirectory: URL {
        get { customDefaultStoreDirectory.withLock { $0 } ?? PersistentContainer.defaultDirectoryURL }
        set { customDefaultStoreDirectory.withLock { $0 = newValue } }
    }

    static func commonDirectory(in directory: URL = defaultDirectory) -> URL {
        directory.appendingPathComponent("CoreDataStores", isDirectory: true)
    }

    /// `<directory>/CoreDataStores/<configuration or Default>/<storeName>`.
    static func directory(forStoreName storeName: String, configurationName: String?, in directory: URL) -> URL {
        commonDirectory(in: directory).appendingPathComponent(configurationName ?? "Default", isDirectory: true)
            .appendingPathComponent(storeName, isDirectory: true)
    }

    static func url(
        forStoreName storeName: String, configurationName: String?, withExtension fileExtension: String, in directory: URL
    ) -> URL {
        self.directory(forStoreName: storeName, configurationName: configurationName, in: directory)
            .appendingPathComponent(storeName).appendingPathExtension(fileExtension)
    }

    /// Creates `folder` (and its parents) if it does not exist.
    ///
    /// - Returns: `folder`.
    static func createFolder(_ folder: URL) throws -> URL {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StrataError(
                .storeNotWritable, "Could not create \(folder.path): \(error.localizedDescription)", fileURL: folder,
                underlyingError: error)
        }
        return folder
    }

    static func removeFolder(_ folder: URL) throws {
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        do {
            try FileManager.default.removeItem(at: folder)
        } catch {
            throw StrataError(
                .storeNotWritable, "Could not delete \(folder.path): \(error.localizedDescription)", fileURL: folder,
                underlyingError: error)
        }
    }
}
