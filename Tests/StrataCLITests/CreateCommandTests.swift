import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata create`, run as a process: an empty store from an Xcode model bundle (a chosen
/// version or the current one), one Xcode model, or a schema JSON, as an SQLite file or in a
/// PostgreSQL schema; never over an existing store.
@Suite(.timeLimit(.minutes(10))) struct CreateCommandTests {
    /// The fixtures of StrataTests: a bundle of three versions (the current one "Movies 3"), and
    /// one Xcode model.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("StrataTests/Fixtures")
    static let bundle = fixtures.appendingPathComponent("Movies.xcdatamodeld")
    static let singleModel = fixtures.appendingPathComponent("Library.xcdatamodel")

    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// The files in the test's folder, so that nothing half-built is left behind.
    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    @Test func aBundleGivesAStoreOfItsCurrentOrAChosenVersion() async throws {
        let store = directory.file("New.sqlite")
        let created = try await strata(["create", store.path, "--model", Self.bundle.path])
        #expect(created.status == 0, "\(created.errorOutput)")
        #expect(created.output.isEmpty)
        #expect(
            created.errorOutput
                == "Created an empty store at \(store.path) with 2 entities from \(Self.bundle.path) (version Movies 3).\n")
        let versions = try await strata(["versions", store.path, "--model", Self.bundle.path])
        #expect(versions.output == "Movies\nMovies 2\nMovies 3 (store, current)\n", "\(versions.errorOutput)")
        let count = try await strata(["query", store.path, "Movie", "--count"])
        #expect(count.output == "{\"count\":0}\n", "\(count.errorOutput)")
        #expect(try files() == ["New.sqlite"])

        let older = directory.file("Older.sqlite")
        let chosen = try await strata(["create", older.path, "--model", Self.bundle.path, "--version", "Movies 2"])
        #expect(chosen.status == 0, "\(chosen.errorOutput)")
        let olderVersions = try await strata(["versions", older.path, "--model", Self.bundle.path])
        #expect(olderVersions.output == "Movies\nMovies 2 (store)\nMovies 3 (current)\n")
        // A migration takes the new store on from there, as any store the app wrote.
        let migrated = try await strata(["migrate", older.path, "--model", Self.bundle.path])
        #expect(migrated.status == 0, "\(migrated.errorOutput)")

        let unknown = try await strata(["create", directory.file("Other.sqlite").path, "--model", Self.bundle.path, "--version", "Movies 9"])
        #expect(unknown.status == 1)
        #expect(unknown.errorOutput == "strata: error: \(Self.bundle.path) has no version Movies 9; it has Movies, Movies 2, Movies 3.\n")
        #expect(try files() == ["New.sqlite", "Older.sqlite"])
    }

    @Test func anXcodeModelOrASchemaJSONGivesAStoreWithThatSchema() async throws {
        let library = directory.file("Library.sqlite")
        let fromModel = try await strata(["create", library.path, "--model", Self.singleModel.path])
        #expect(fromModel.status == 0, "\(fromModel.errorOutput)")
        let modelSchema = try await strata(["schema", Self.singleModel.path, "--json"])
        let storeSchema = try await strata(["schema", library.path, "--json"])
        #expect(storeSchema.status == 0, "\(storeSchema.errorOutput)")
        #expect(storeSchema.output == modelSchema.output)

        // The demo model's schema, written by `strata schema --json` from a store an app made,
        // gives a store that app opens.
        let source = directory.file("Source.sqlite")
        let app = try PersistentContainer(name: "App", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(source)])
        try app.close()
        let json = directory.file("movies.json")
        let schema = try await strata(["schema", source.path, "--json", "--output", json.path])
        #expect(schema.status == 0, "\(schema.errorOutput)")
        let copy = directory.file("Copy.sqlite")
        let fromJSON = try await strata(["create", copy.path, "--model", json.path])
        #expect(fromJSON.status == 0, "\(fromJSON.errorOutput)")
        #expect(fromJSON.errorOutput == "Created an empty store at \(copy.path) with 5 entities from \(json.path).\n")
        let reopened = try PersistentContainer(name: "App", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(copy)])
        let context = reopened.newBackgroundContext()
        Movie(context: context).title = "Heat"
        try context.save()
        try reopened.close()
        let count = try await strata(["query", copy.path, "Movie", "--count"])
        #expect(count.output == "{\"count\":1}\n", "\(count.errorOutput)")
    }

    @Test func anExistingFileOrStoreIsNeverOverwritten() async throws {
        let kept = directory.file("Kept.sqlite")
        try Data("keep".utf8).write(to: kept)
        let overFile = try await strata(["create", kept.path, "--model", Self.bundle.path])
        #expect(overFile.status == 1)
        #expect(
            overFile.errorOutput
                == "strata: error: \(kept.path) exists; strata create never overwrites a store. Choose another path, or remove the file first.\n")
        #expect(try Data(contentsOf: kept) == Data("keep".utf8))

        let store = directory.file("Store.sqlite")
        #expect(try await strata(["create", store.path, "--model", Self.bundle.path]).status == 0)
        let before = try Data(contentsOf: store)
        let overStore = try await strata(["create", store.path, "--model", Self.singleModel.path])
        #expect(overStore.status == 1)
        #expect(overStore.errorOutput.contains("exists"), "\(overStore.errorOutput)")
        #expect(try Data(contentsOf: store) == before)

        // A symbolic link to nothing holds the name too.
        let link = directory.file("Link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: directory.file("nowhere").path)
        let overLink = try await strata(["create", link.path, "--model", Self.bundle.path])
        #expect(overLink.status == 1)
        #expect(overLink.errorOutput.contains("exists"), "\(overLink.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("nowhere").path))
        #expect(try files() == ["Kept.sqlite", "Link.sqlite", "Store.sqlite"])
    }

    @Test func aModelThatIsNoneOfTheThreeKindsIsAOneLineError() async throws {
        let store = directory.file("New.sqlite")
        let missing = try await strata(["create", store.path, "--model", directory.file("None.xcdatamodeld").path])
        #expect(missing.status == 1)
        #expect(missing.errorOutput == "strata: error: There is no model at \(directory.file("None.xcdatamodeld").path).\n")

        let text = directory.file("notes.txt")
        try "not a model".write(to: text, atomically: true, encoding: .utf8)
        let notJSON = try await strata(["create", store.path, "--model", text.path])
        #expect(notJSON.status == 1)
        #expect(notJSON.errorOutput.split(separator: "\n").count == 1, "\(notJSON.errorOutput)")
        #expect(
            notJSON.errorOutput.hasPrefix(
                "strata: error: \(text.path) is neither an Xcode model (.xcdatamodeld, .xcdatamodel) nor a schema as `strata schema --json` writes it"),
            "\(notJSON.errorOutput)")

        let versionOfOne = try await strata(["create", store.path, "--model", Self.singleModel.path, "--version", "Library"])
        #expect(versionOfOne.status == 1)
        #expect(versionOfOne.errorOutput.contains("--version chooses a version of a model bundle"), "\(versionOfOne.errorOutput)")

        let noFolder = try await strata(["create", directory.file("missing/New.sqlite").path, "--model", Self.bundle.path])
        #expect(noFolder.status == 1)
        #expect(noFolder.errorOutput.contains("There is no folder"), "\(noFolder.errorOutput)")

        let usage = try await strata(["create", store.path])
        #expect(usage.status == 64)
        #expect(try files() == ["notes.txt"])
    }

    @Test func aPostgreSQLStoreIsCreatedInAnEmptySchemaOnly() async throws {
        let schemaName = "create_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let url = try PostgresTestServer.url(schema: schemaName)
        let created = try await strata(["create", url, "--model", Self.bundle.path])
        #expect(created.status == 0, "\(created.errorOutput)")
        #expect(created.errorOutput.contains("Created an empty store at postgres://"), "\(created.errorOutput)")
        #expect(!created.errorOutput.contains(try #require(URLComponents(string: url)?.password)), "the password is shown")
        let versions = try await strata(["versions", url, "--model", Self.bundle.path])
        #expect(versions.output == "Movies\nMovies 2\nMovies 3 (store, current)\n", "\(versions.errorOutput)")
        let count = try await strata(["query", url, "Review", "--count"])
        #expect(count.output == "{\"count\":0}\n", "\(count.errorOutput)")

        let again = try await strata(["create", url, "--model", Self.singleModel.path])
        #expect(again.status == 1)
        #expect(again.errorOutput.split(separator: "\n").count == 1, "\(again.errorOutput)")
        #expect(again.errorOutput.contains("There is a store in postgres://"), "\(again.errorOutput)")
        #expect(again.errorOutput.contains("never overwrites a store"), "\(again.errorOutput)")
        #expect(try await strata(["versions", url, "--model", Self.bundle.path]).output.contains("Movies 3 (store, current)"))
    }
}
