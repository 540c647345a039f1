import Foundation
import StrataTesting
import Testing

/// `scripts/check-layers.py`, which `scripts/test.sh` runs before every build, keeps the layers
/// of `Sources/Strata` depending only downward. These tests make sure the check itself can fail.
@Suite struct LayerCheckTests {
    /// The repository's root, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs the check on `sources` and returns its exit status and what it wrote to stderr.
    static func check(_ sources: URL) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repository.appendingPathComponent("scripts/check-layers.py").path, sources.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A source tree with `files` (path relative to the tree → contents).
    static func tree(_ files: [String: String]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for (path, contents) in files {
            let url = directory.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: url, atomically: true, encoding: .utf8)
        }
        return directory
    }

    @Test func theStrataSourcesPass() throws {
        let result = try Self.check(Self.repository.appendingPathComponent("Sources/Strata"))
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func aLowerLayerNamingAHigherOnesTypeFails() throws {
        let directory = try Self.tree([
            "Objects/ManagedObject.swift": "open class ManagedObject {}\n",
            "Query/FetchRequest.swift": "public struct FetchRequest<Model: ManagedObject> {}\n",
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 1)
        #expect(result.errors.contains("Query/FetchRequest.swift: names ManagedObject, declared in Objects/"))
    }

    @Test func siblingsAboveStoreMayNotNameEachOther() throws {
        let directory = try Self.tree([
            "SQLite/SQLiteStore.swift": "public final class SQLiteStore {}\n",
            "Objects/PersistentContainer.swift": "let store = SQLiteStore()\n",
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 1)
        #expect(result.errors.contains("Objects/PersistentContainer.swift: names SQLiteStore, declared in SQLite/"))
    }

    @Test func thePostgreSQLTargetStaysAtTheStoreLayer() throws {
        let directory = try Self.tree([
            "Strata/Objects/ObjectContext.swift": "public final class ObjectContext {}\n",
            "Strata/SQL/StoreLayout.swift": "package struct StoreLayout {}\n",
            "StrataPostgres/PostgresStore.swift": "let layout: StoreLayout\nfunc merge(into context: ObjectContext) {}\n",
        ])
        let result = try Self.check(directory.url.appendingPathComponent("Strata"))
        #expect(result.status == 1)
        #expect(result.errors.contains("StrataPostgres/PostgresStore.swift: names ObjectContext, declared in Strata's Objects/"))
        #expect(!result.errors.contains("names StoreLayout"))
    }

    @Test func namesInCommentsAndStringsDoNotCount() throws {
        let directory = try Self.tree([
            "Objects/ManagedObject.swift": "open class ManagedObject {}\n",
            "Query/FetchRequest.swift": """
                /// Returns ``ManagedObject`` instances.
                /* ManagedObject */
                let message = "no ManagedObject here"
                """,
            "Observation/Controller.swift": "struct Controller { let object: ManagedObject }\n",
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func onlyTheSQLiteLayerImportsGRDB() throws {
        let directory = try Self.tree([
            "SQLite/SQLiteStore.swift": "import GRDB\n",
            "Store/PersistentStore.swift": "@preconcurrency import GRDB\n",
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 1)
        #expect(result.errors.contains("Store/PersistentStore.swift: imports GRDB"))
        #expect(!result.errors.contains("SQLite/SQLiteStore.swift"))
    }

    @Test func aFolderThatIsNoLayerFails() throws {
        let directory = try Self.tree(["Helpers/Thing.swift": "struct Thing {}\n"])
        let result = try Self.check(directory.url)
        #expect(result.status == 1)
        #expect(result.errors.contains("Helpers/: not a known layer"))
    }

    @Test func callingAMethodAnotherLayerAddsToALowerTypeFails() throws {
        let directory = try Self.tree([
            "Store/StoreDescription.swift": "public struct StoreDescription { var url: String }\n",
            "SQLite/StoreDescription+CoreData.swift": """
                extension StoreDescription {
                    package var isCoreDataStore: Bool { url.hasSuffix(".sqlite") }
                    func makeConversionURL() -> String { url + "-converting" }
                }
                """,
            "Objects/PersistentContainer.swift": """
                func open(_ description: StoreDescription) {
                    if description.isCoreDataStore { print(description.makeConversionURL()) }
                }
                """,
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 1)
        #expect(result.errors.contains("Objects/PersistentContainer.swift: calls isCoreDataStore, which SQLite/ adds to StoreDescription"))
        #expect(result.errors.contains("Objects/PersistentContainer.swift: calls makeConversionURL, which SQLite/ adds to StoreDescription"))
    }

    @Test func entryPointsAndRequirementsOfALowerLayerMayBeCalled() throws {
        let directory = try Self.tree([
            "Store/StoreDescription.swift": """
                public struct StoreDescription { var provider: any PersistentStoreProvider }
                public protocol PersistentStoreProvider {
                    func recordedSchema() -> String?
                }
                """,
            "SQLite/SQLiteStoreProvider.swift": """
                struct SQLiteStoreProvider: PersistentStoreProvider { func recordedSchema() -> String? { nil } }
                extension StoreDescription {
                    public static func sqlite(_ url: String) -> StoreDescription { StoreDescription(provider: SQLiteStoreProvider()) }
                    public func recordedSchema() -> String? { provider.recordedSchema() }
                }
                """,
            "Objects/PersistentContainer.swift": """
                let description = StoreDescription.sqlite("/tmp/a.sqlite")
                let schema = description.provider.recordedSchema()
                """,
        ])
        let result = try Self.check(directory.url)
        #expect(result.status == 0, "\(result.errors)")
    }
}
