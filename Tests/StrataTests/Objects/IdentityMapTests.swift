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

    /// Objects come and go in any order, many times over, with the same keys in two entities and
    /// two stores: every lookup finds exactly the live object of its own store, entity and key.
    /// Keys one apart, and keys 4,096 apart (which pile up until the table mixes them).
    @Test(arguments: [(1, 1), (2, 1), (3, 4_096), (4, 4_096)])
    func churnKeepsEveryEntryExact(seed: UInt64, keyStride: Int64) throws {
        let schema = try Schema([Movie.self, Review.self, Person.self])
        let movie = try #require(schema.entity(named: "Movie"))
        let person = try #require(schema.entity(named: "Person"))
        let map = IdentityMap()
        var live: [ObjectID: ManagedObject] = [:]
        var random = SplitMix64(seed: seed)
        func id(_ step: UInt64) -> ObjectID {
            let entity = step % 2 == 0 ? movie : person
            return ObjectID(
                entityName: entity.name, storeIdentifier: step % 3 == 0 ? "A" : "B",
                primaryKey: (Int64(step % 700) - 100) * keyStride)
        }
        for _ in 0..<20_000 {
            let step = random.next()
            let objectID = id(step >> 8)
            switch step % 4 {
            case 0, 1:  // register, or find the registered one
                let entity = objectID.entityName == "Movie" ? movie : person
                let object = map.object(for: objectID) { ManagedObject(_storedEntity: entity, objectID: objectID) }
                if let held = live[objectID] { #expect(object === held) }
                live[objectID] = object
            case 2:  // the last reference goes: the object leaves in deinit
                live[objectID] = nil
            default:  // taken out by the context
                map[objectID] = nil
                live[objectID] = nil
            }
            #expect(map[objectID] === live[objectID])
        }
        for (objectID, object) in live { #expect(map[objectID] === object) }
        #expect(Set(map.values.map(ObjectIdentifier.init)) == Set(live.values.map(ObjectIdentifier.init)))
        for step in UInt64(0)..<2_100 where live[id(step)] == nil { #expect(map[id(step)] == nil) }
    }

    /// A new object is kept under its temporary ID and moves to its permanent one once.
    @Test func aNewObjectMovesToItsPermanentID() throws {
        let schema = try Schema([Movie.self])
        let entity = try #require(schema.entity(named: "Movie"))
        let map = IdentityMap()
        let object = ManagedObject(_storedEntity: entity)
        let temporary = object.objectID
        map[temporary] = object
        #expect(map[temporary] === object)
        let permanent = ObjectID(entityName: "Movie", storeIdentifier: "S", primaryKey: 7)
        map.changeID(of: object, to: permanent)
        #expect(map[temporary] == nil)
        #expect(map[permanent] === object)
        #expect(map.values.count == 1)
        map.removeAll()
        #expect(map[permanent] == nil)
        #expect(map.values.isEmpty)
    }

    /// Consecutive keys fill neighbouring slots; a key whose home falls inside such a run (a
    /// lookup of an ID the context does not hold) would walk the run to its end every time, so
    /// the first such walk makes the table mix its keys, and everything stays found.
    @Test func aLongLookupMakesTheTableMixItsKeys() throws {
        let schema = try Schema([Movie.self, Review.self, Person.self])
        let entity = try #require(schema.entity(named: "Movie"))
        let map = IdentityMap()
        func id(_ key: Int64) -> ObjectID { ObjectID(entityName: "Movie", storeIdentifier: "S", primaryKey: key) }
        let objects = (1...3_000).map { key in
            map.object(for: id(Int64(key))) { ManagedObject(_storedEntity: entity, objectID: id(Int64(key))) }
        }
        #expect(map.mixesKeys(like: id(1)) == false)
        #expect(map[id(1 << 20 + 5)] == nil)
        #expect(map.mixesKeys(like: id(1)) == true)
        for (index, object) in objects.enumerated() { #expect(map[id(Int64(index + 1))] === object) }
    }
}
