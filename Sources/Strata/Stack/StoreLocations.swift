import Foundation

/// The folder the store-location helpers use when given none; `nil` until an app sets it.
private let customDefaultStoreDirectory = LockedBox<URL?>(nil)

/// Store locations by convention, as the stack kit keeps them: every store in a folder of its
/// own, `<base>/CoreDataStores/<configuration or Default>/<name>/<name>.<extension>`, so that a
/// store's files (`-wal`, `-shm`, external data) stay together and one store can be deleted by
/// deleting its folder.
///
/// ```swift
/// let url = SQLiteStore.url(forStoreName: "Movies")
/// // ~/.local/share/CoreDataStores/Default/Movies/Movies.sqlite on Linux
/// let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [.sqlite(url)])
/// try SQLiteStore.delete(forStoreName: "Movies")   // after closing the container
/// ```
///
/// The helpers are static members of every store type (`SQLiteStore.url(forStoreName:)` where
/// the kit writes `NSPersistentStore.url(forStoreName:)`); they compute and remove folders and
/// never open a store.
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

    /// The folder that holds all stores placed by convention: `CoreDataStores` in
    /// `directory` (by default ``defaultDirectory``).
    public static func commonDirectory(in directory: URL = defaultDirectory) -> URL {
        StoreLocation.commonDirectory(in: directory)
    }

    /// The folder of the store named `storeName` in `configurationName` (`Default` when `nil`):
    /// `<common directory>/<configuration or Default>/<storeName>`.
    ///
    /// - Parameters:
    ///   - storeName: The store's name.
    ///   - configurationName: The configuration whose entities the store holds; `nil` for the
    ///     default one.
    ///   - directory: The common directory (by default ``commonDirectory(in:)``).
    public static func directory(
        forStoreName storeName: String, configurationName: String? = nil, in directory: URL = commonDirectory()
    ) -> URL {
        StoreLocation.directory(forStoreName: storeName, configurationName: configurationName, in: directory)
    }

    /// The file of the store named `storeName`: `<store's folder>/<storeName>.<fileExtension>`.
    ///
    /// - Parameters:
    ///   - storeName: The store's name.
    ///   - configurationName: Its configuration; `nil` for the default one.
    ///   - fileExtension: The file's extension, `sqlite` by default.
    ///   - directory: The common directory (by default ``commonDirectory(in:)``).
    public static func url(
        forStoreName storeName: String, configurationName: String? = nil, withExtension fileExtension: String = "sqlite",
        in directory: URL = commonDirectory()
    ) -> URL {
        StoreLocation.url(
            forStoreName: storeName, configurationName: configurationName, withExtension: fileExtension, in: directory)
    }

    /// Deletes the folder of the store named `storeName`, and so every file of it. Close every
    /// container that has the store open first.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when the folder
    ///   exists and cannot be removed. A folder that does not exist is not an error.
    public static func delete(forStoreName storeName: String, configurationName: String? = nil, in directory: URL = commonDirectory()) throws {
        try StoreLocation.removeFolder(
            StoreLocation.directory(forStoreName: storeName, configurationName: configurationName, in: directory))
    }

    /// Deletes the common directory (by default ``commonDirectory(in:)``) and every store in it.
    /// Close every container that has one of them open first.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotWritable`` when it exists and
    ///   cannot be removed.
    public static func deleteAll(in directory: URL = commonDirectory()) throws {
        try StoreLocation.removeFolder(directory)
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

    static func directory(forStoreName storeName: String, configurationName: String?, in directory: URL) -> URL {
        directory.appendingPathComponent(configurationName ?? "Default", isDirectory: true)
            .appendingPathComponent(storeName, isDirectory: true)
    }

    static func url(
        forStoreName storeName: String, configurationName: String?, withExtension fileExtension: String, in directory: URL
    ) -> URL {
        self.directory(forStoreName: storeName, configurationName: configurationName, in: directory)
            .appendingPathComponent(storeName).appendingPathExtension(fileExtension)
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
