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

    @Test func storesHaveAFolderEachByConfigurationAndName() throws {
        let common = SQLiteStore.commonDirectory(in: directory.url)
        #expect(common == directory.url.appendingPathComponent("CoreDataStores", isDirectory: true))
        #expect(SQLiteStore.directory(forStoreName: "Movies", in: common).path == common.path + "/Default/Movies")
        #expect(SQLiteStore.directory(forStoreName: "Movies", configurationName: "Cloud", in: common).path == common.path + "/Cloud/Movies")
        #expect(SQLiteStore.url(forStoreName: "Movies", in: common).path == common.path + "/Default/Movies/Movies.sqlite")
        #expect(
            SQLiteStore.url(forStoreName: "Movies", configurationName: "Local", withExtension: "store", in: common).path
                == common.path + "/Local/Movies/Movies.store")
    }

    @Test func aContainerOpensAStoreAtItsConventionalURLAndDeletingRemovesAllItsFiles() throws {
        let common = SQLiteStore.commonDirectory(in: directory.url)
        let movies = SQLiteStore.url(forStoreName: "Movies", in: common)
        let tags = SQLiteStore.url(forStoreName: "Tags", configurationName: "Cloud", in: common)
        for url in [movies, tags] {
            let container = try PersistentContainer(name: "Movies", entities: [Movie.self], storeDescriptions: [.sqlite(url)])
            Movie(context: container.newBackgroundContext()).title = "unsaved"
            try container.close()
            #expect(FileManager.default.fileExists(atPath: url.path))
        }
        try SQLiteStore.delete(forStoreName: "Movies", in: common)
        #expect(!FileManager.default.fileExists(atPath: movies.deletingLastPathComponent().path))
        #expect(FileManager.default.fileExists(atPath: tags.path))
        try SQLiteStore.delete(forStoreName: "Movies", in: common)  // gone already: no error
        try SQLiteStore.deleteAll(in: common)
        #expect(!FileManager.default.fileExists(atPath: common.path))
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
            #expect(SQLiteStore.commonDirectory().path.hasSuffix("/CoreDataStores"))
        #endif
        // An app may move every conventional store at launch (the only test that sets it).
        let original = SQLiteStore.defaultDirectory
        defer { SQLiteStore.defaultDirectory = original }
        SQLiteStore.defaultDirectory = directory.url
        #expect(SQLiteStore.url(forStoreName: "Movies").path == directory.url.path + "/CoreDataStores/Default/Movies/Movies.sqlite")
    }
}
