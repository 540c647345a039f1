import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The context's identity map holds its objects without retaining them: what users see is one
/// instance per row while anyone holds it, a fresh one after it was released, and nothing left
/// behind by released, saved, re-keyed, rolled-back or reset objects.
@Suite struct IdentityMapTests {
    @Test func oneInstancePerRowWhileItIsHeld() throws {
        let library = try MovieLibrary(movies: [("Heat", 1995), ("Ronin", 1998)])
        let context = library.container.newBackgroundContext()
        let first = try context.fetch(Movie.self)
        let second = try context.fetch(Movie.self)
        #expect(first.count == 2)
        for (a, b) in zip(first, second) { #expect(a === b) }
        // Optimized builds may release objects after their last use, before the scope ends.
        withExtendedLifetime((first, second)) { #expect(context.registeredObjects.count == 2) }
    }

    @Test func releasedObjectsLeaveTheContext() throws {
        let library = try MovieLibrary(movies: (0..<500).map { ("Movie \($0)", Int16(1900 + $0 % 100)) })
        let context = library.container.newBackgroundContext()
        var ids: [ObjectID] = []
        do {
            let movies = try context.fetch(Movie.self)
            ids = movies.map(\.objectID)
            withExtendedLifetime(movies) { #expect(context.registeredObjects.count == 500) }
        }
        #expect(context.registeredObjects.isEmpty)
        for id in ids { #expect(context.registeredObject(for: id) == nil) }
        // Fetching again makes new instances with the stored values.
        let again = try context.fetch(Movie.self)
        #expect(Set(again.map(\.title)) == Set((0..<500).map { "Movie \($0)" }))
        withExtendedLifetime(again) { #expect(context.registeredObjects.count == 500) }
    }

    @Test func savedObjectsAreFoundUnderTheirPermanentIDsOnly() throws {
        let library = try MovieLibrary(movies: [])
        let context = library.container.newBackgroundContext()
        let movie = Movie(title: "Heat", year: 1995, in: context)
        let temporary = movie.objectID
        try context.save()
        #expect(!movie.objectID.isTemporaryID)
        #expect(context.registeredObject(for: temporary) == nil)
        #expect(context.registeredObject(for: movie.objectID) === movie)
        #expect(context.registeredObjects == [movie])
        let permanent = movie.objectID
        _ = consume movie
        // The released object took its entry (under its new ID) with it.
        #expect(context.registeredObject(for: permanent) == nil)
        #expect(context.registeredObjects.isEmpty)
        let fetched = try #require(try context.existingObject(with: permanent) as? Movie)
        #expect(fetched.title == "Heat")
    }

    @Test func childContextsFollowTheirParentsNewIDs() throws {
        let library = try MovieLibrary(movies: [])
        let parent = library.container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        let draft = Movie(title: "Heat", year: 1995, in: child)
        try child.save()
        try parent.save()
        #expect(!draft.objectID.isTemporaryID)
        #expect(child.registeredObject(for: draft.objectID) === draft)
        let id = draft.objectID
        _ = consume draft
        #expect(child.registeredObject(for: id) == nil)
        #expect(parent.registeredObjects.isEmpty)
    }

    @Test func objectsOutlivingTheirContextsMapsAreSafeToRelease() throws {
        let library = try MovieLibrary(movies: [("Heat", 1995)])
        var kept: [Movie] = []
        do {
            let context = library.container.newBackgroundContext()
            kept = try context.fetch(Movie.self)
            let inserted = Movie(title: "Ronin", year: 1998, in: context)
            context.rollback()  // the inserted object leaves the context, still alive
            #expect(inserted.context == nil)
            #expect(context.registeredObjects.count == 1)
            context.reset()  // every object leaves it
            #expect(context.registeredObjects.isEmpty)
            #expect(context.registeredObject(for: kept[0].objectID) == nil)
        }
        #expect(kept[0].title == "Heat")
        kept.removeAll()  // released after their map forgot them: nothing to remove, no crash
        let context = library.container.newBackgroundContext()
        #expect(try context.fetch(Movie.self).map(\.title) == ["Heat"])
    }

    @Test func aDeletedObjectsEntryGoesWithTheSave() throws {
        let library = try MovieLibrary(movies: [("Heat", 1995)])
        let context = library.container.newBackgroundContext()
        let movie = try #require(try context.fetch(Movie.self).first)
        let id = movie.objectID
        context.delete(movie)
        try context.save()
        #expect(context.registeredObject(for: id) == nil)
        #expect(throws: StrataError.self) { try context.existingObject(with: id) }
    }

    @Test func aReleasedFaultIsReplacedByANewOne() throws {
        let library = try MovieLibrary(movies: [("Heat", 1995)])
        let context = library.container.newBackgroundContext()
        let id = try #require(try context.fetch(Movie.self).first?.objectID)
        do {
            let fault = try context.object(with: id)
            #expect(fault.isFault)
            #expect(context.registeredObject(for: id) === fault)
        }
        #expect(context.registeredObject(for: id) == nil)
        let movie = try #require(try context.object(with: id) as? Movie)
        #expect(movie.title == "Heat")
    }
}
