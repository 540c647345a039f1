import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Models found by name in a bundle or folder, and containers opened from them, as
/// `NSPersistentContainer(name:)` finds its model.
@Suite struct ModelsByNameTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func fixture(_ name: String) throws -> URL {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return fixtures.appendingPathComponent(name)
    }

    @Test func aVersionedModelIsFoundInTheBundlesResourcesWithItsCurrentVersion() throws {
        let model = try XcodeModelBundle.named("Movies", in: .module)
        #expect(model.currentVersionName == "Movies 3")
        #expect(model.versions.count == 3)
        let schema = try Schema.named("Movies", in: .module)
        #expect(schema.versionHash == model.currentVersion.schema.versionHash)
    }

    @Test func aContainerByNameOpensTheModelOfThatName() throws {
        let container = try PersistentContainer(name: "Movies", bundle: .module, storeDescriptions: [.inMemory])
        #expect(container.name == "Movies")
        #expect(Set(container.schema.entities.map(\.name)) == ["Movie", "Review"])
        let context = container.newBackgroundContext()
        let movie = ManagedObject(entity: try #require(container.schema.entity(named: "Movie")))
        context.insert(movie)
        #expect(context.hasChanges)
    }

    @Test func aSingleVersionModelIsFoundInAFolderBelowTheOneSearched() throws {
        let nested = directory.url.appendingPathComponent("Resources/Models", isDirectory: true)
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try fixture("Library.xcdatamodel"), to: nested.appendingPathComponent("Library.xcdatamodel"))
        let schema = try Schema.named("Library", inDirectory: directory.url)
        #expect(Set(schema.entities.map(\.name)) == ["Author", "Book", "Person", "Reader"])
    }

    @Test func aMissingModelIsATypedErrorNamingTheFolder() throws {
        let error = #expect(throws: StrataError.self) { try Schema.named("Nowhere", inDirectory: directory.url) }
        #expect(error?.code == .modelFileNotFound)
        #expect(error?.message.contains("Nowhere") == true)
        #expect(error?.message.contains(directory.url.path) == true)
        #expect(throws: StrataError.self) { try PersistentContainer(name: "Nowhere", bundle: .module) }
    }

    @Test func aCompiledModelAloneIsNamedInTheError() throws {
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("Movies.momd"), withIntermediateDirectories: true)
        let error = #expect(throws: StrataError.self) { try Schema.named("Movies", inDirectory: directory.url) }
        #expect(error?.code == .modelFileNotFound)
        #expect(error?.message.contains("compiled Movies.momd") == true)
    }

    @Test func aBrokenModelOfThatNameReportsItsOwnError() throws {
        try FileManager.default.copyItem(at: try fixture("Broken.xcdatamodel"), to: directory.url.appendingPathComponent("Broken.xcdatamodel"))
        let error = #expect(throws: StrataError.self) { try Schema.named("Broken", inDirectory: directory.url) }
        #expect(error?.code == .malformedModelFile)
    }
}
