import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Store locations by the stack kit's convention:
/// `<base>/CoreDataStores/<configuration or Default>/<name>/<name>.<extension>`.
@Suite struct StoreLocationsTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The kit's meanings: every `in:` folder is the base under which `CoreDataStores` goes, and
    /// the folders named are created.
    @Test func storesHaveAFolderEachByConfigurationAndNameUnderTheBaseFolder() throws {
        let base = directory.url
        let common = try SQLiteStore.commonDirectory(in: base)
        #expect(common == base.appendingPathComponent("CoreDataStores", isDirectory: true))
        #expect(FileManager.default.fileExists(atPath: common.path))
        let folder = try SQLiteStore.directory(forStoreName: "Movies", in: base)
        #expect(folder.path == common.path + "/Default/Movies")
        #expect(FileManager.default.fileExists(atPath: folder.path))
        #expect(try SQLiteStore.directory(forStoreName: "Movies", configurationName: "Cloud", in: base).path == common.path + "/Cloud/Movies")
        let url = try SQLiteStore.url(forStoreName: "Tags", in: base)
        #expect(url.path == common.path + "/Default/Tags/Tags.sqlite")
        // The store's folder is made, not its file.
        #expect(FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(
            try SQLiteStore.url(forStoreName: "Movies", configurationName: "Local", withExtension: "store", in: base).path
                == common.path + "/Local/Movies/Movies.store")
    }

    @Test func aFolderThatCannotBeMadeIsATypedError() throws {
        let file = directory.url.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        let error = #expect(throws: StrataError.self) { try SQLiteStore.url(forStoreName: "Movies", in: file) }
        #expect(error?.code == .storeNotWritable)
    }

    @Test func aContainerOpensAStoreAtItsConventionalURLAndDeletingRemovesAllItsFiles() throws {
        let base = directory.url
        let movies = try SQLiteStore.url(forStoreName: "Movies", in: base)
        let tags = try SQLiteStore.url(forStoreName: "Tags", configurationName: "Cloud", in: base)
        for url in [movies, tags] {
            let container = try PersistentContainer(name: "Movies", entities: [Movie.self], storeDescriptions: [.sqlite(url)])
            Movie(context: container.newBackgroundContext()).title = "unsaved"
            try container.close()
            #expect(FileManager.default.fileExists(atPath: url.path))
        }
        try SQLiteStore.delete(forStoreName: "Movies", in: base)
        #expect(!FileManager.default.fileExists(atPath: movies.deletingLastPathComponent().path))
        #expect(FileManager.default.fileExists(atPath: tags.path))
        try SQLiteStore.delete(forStoreName: "Movies", in: base)  // gone already: no error
        try SQLiteStore.deleteAll(in: base)
        #expect(!FileManager.default.fileExists(atPath: base.appendingPathComponent("CoreDataStores").path))
        #expect(FileManager.default.fileExists(atPath: base.path))  // the base folder stays
    }

    @Test func theDefaultDirectoryFollowsXDGOnLinuxAndCanBeSet() throws {
        let home = URL(fileURLWithPath: "/home/ada", isDirectory: true)
        #expect(PersistentContainer.defaultDirectoryURL(environment: ["XDG_DATA_HOME": "/srv/data"], home: home).path == "/srv/data")
        #expect(PersistentContainer.defaultDirectoryURL(environment: [:], home: home).path == "/home/ada/.local/share")
        // The specification ignores a relative or empty value.
        for ignored in ["", "relative/data"] {
            #expect(PersistentContainer.defaultDirectoryURL(environment: ["XDG_DATA_HOME": ignored], home: home).path == "/home/ada/.local/share")
        }
        #if !canImport(Darwin)
            #expect(StoreLocation.commonDirectory().path.hasSuffix("/CoreDataStores"))
        #endif
        // An app may move every conventional store at launch (the only test that sets it).
        let original = SQLiteStore.defaultDirectory
        defer { SQLiteStore.defaultDirectory = original }
        SQLiteStore.defaultDirectory = directory.url
        #expect(try SQLiteStore.url(forStoreName: "Movies").path == directory.url.path + "/CoreDataStores/Default/Movies/Movies.sqlite")
    }
}
