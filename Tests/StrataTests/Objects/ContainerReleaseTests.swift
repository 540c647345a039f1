import Foundation
import Strata
import StrataTesting
import Testing

/// A container that is released without `close()` lets go of its stores and their files, as a
/// released `NSPersistentContainer` does — also after its view context was used.
@Suite(.timeLimit(.minutes(10))) @MainActor struct ContainerReleaseTests {
    /// The open descriptors of this process that name `url` (its `-wal` and `-shm` files too).
    static func openDescriptors(naming url: URL) throws -> Int {
        let folder = "/proc/self/fd"
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { entry in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(entry)")) ?? ""
            return target.hasPrefix(url.path)
        }.count
    }

    @Test func aReleasedContainerClosesItsStoreAfterItsViewContextWasUsed() throws {
        let folder = try TemporaryDirectory()
        let url = folder.url.appendingPathComponent("Movies.sqlite")
        var context: ObjectContext?
        do {
            let container = try PersistentContainer(name: "Movies", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
            let viewContext = container.viewContext
            Movie(context: viewContext).title = "Heat"
            try viewContext.save()
            #expect(try viewContext.fetch(Movie.self).map(\.title) == ["Heat"])
            #expect(try Self.openDescriptors(naming: url) > 0)
            context = viewContext
        }
        #expect(try Self.openDescriptors(naming: url) == 0)
        // The view context outlived its container: it says so instead of answering from memory.
        let orphan = try #require(context)
        #expect(orphan.container == nil)
        #expect { try orphan.fetch(Movie.self) } throws: { ($0 as? StrataError)?.code == .storeClosed }
        #expect { try orphan.fetch(entityName: "Movie") } throws: { ($0 as? StrataError)?.code == .storeClosed }
        #expect { try orphan.count(entityName: "Movie") } throws: { ($0 as? StrataError)?.code == .storeClosed }
        Movie(context: orphan).title = "Ronin"
        #expect { try orphan.save() } throws: { ($0 as? StrataError)?.code == .storeClosed }
        // What was saved is in the store.
        let reopened = try PersistentContainer(name: "Movies", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
        defer { try? reopened.close() }
        #expect(try reopened.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
    }

    @Test func backgroundContextsKeepTheirContainerAlive() throws {
        let folder = try TemporaryDirectory()
        let url = folder.url.appendingPathComponent("Movies.sqlite")
        let context = try PersistentContainer(name: "Movies", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
            .newBackgroundContext()
        Movie(context: context).title = "Heat"
        try context.save()
        #expect(try context.fetch(Movie.self).count == 1)
        #expect(try Self.openDescriptors(naming: url) > 0)
    }
}
