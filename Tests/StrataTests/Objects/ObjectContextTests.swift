import Foundation
import Testing

@testable import Strata

/// The context's identity map and change sets, object IDs, and value snapshots resolved
/// through a context.
@Suite struct ObjectContextTests {
    let context: ObjectContext

    init() throws {
        context = ObjectContext(schema: try Schema([Movie.self, InsertProbe.self]))
    }

    /// A movie that the context holds as saved: inserted, then committed the way a store
    /// commits after a save.
    func makeSavedMovie(title: String = "Heat") -> Movie {
        let movie = Movie(context: context)
        movie.title = title
        movie.commitValues()
        return movie
    }

    // MARK: Inserting

    @Test func initWithContextInserts() throws {
        let movie = Movie(context: context)
        #expect(movie.context === context)
        #expect(movie.isInserted)
        #expect(!movie.isDeleted)
        #expect(movie.hasChanges)
        #expect(movie.objectID.isTemporaryID)
        #expect(movie.objectID.entityName == "Movie")
        #expect(context.insertedObjects == [movie])
        #expect(context.registeredObjects == [movie])
        #expect(context.hasChanges)
        #expect(context.registeredObject(for: movie.objectID) === movie)
        #expect(try context.existingObject(with: movie.objectID) === movie)
        // The object uses the context's entity.
        #expect(movie.entity === context.schema.entity(named: "Movie"))
    }

    @Test func newObjectsDeletedBeforeSavingLeaveNoPlaceInTheInsertionOrder() throws {
        // A released object's identifier is often reused by the next new object; a stale entry
        // would make that object appear twice in the save order.
        for _ in 0..<200 {
            let scratch = Movie(context: context)
            context.delete(scratch)
        }
        for index in 0..<200 { Movie(context: context).title = "Film \(index)" }
        #expect(context.unsaved.insertionOrder.count == 200)
        #expect(Set(context.unsaved.insertionOrder).count == 200)
    }

    @Test func insertingAStandaloneObjectAdoptsTheContextsEntity() throws {
        let movie = Movie(title: "Heat", year: 1995)
        #expect(movie.context == nil)
        #expect(!movie.isInserted)
        context.insert(movie)
        #expect(movie.context === context)
        #expect(movie.isInserted)
        #expect(movie.entity === context.schema.entity(named: "Movie"))
        #expect(movie.title == "Heat")
        #expect(context.insertedObjects == [movie])

        context.insert(movie)
        #expect(context.insertedObjects.count == 1)
    }

    @Test func awakeFromInsertRunsOnceOnInsertion() throws {
        let probe = InsertProbe()
        #expect(probe.awakeCount == 0)
        #expect(probe.createdAt == nil)
        context.insert(probe)
        context.insert(probe)
        #expect(probe.awakeCount == 1)
        #expect(probe.createdAt == Date(timeIntervalSince1970: 1_000))

        let direct = InsertProbe(context: context)
        #expect(direct.awakeCount == 1)
        #expect(context.insertedObjects == [probe, direct])
    }

    @Test func insertingAnObjectInsertsItsNewRelatedObjects() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let review = Review()
        let director = Person()
        let sequel = Movie(title: "Heat 2", year: 2026)
        review.movie = movie
        movie.director = director
        // Reached only through the director.
        director.actedIn = [sequel]

        context.insert(movie)
        #expect(context.insertedObjects == [movie, review, director, sequel])
        for object in [movie, review, director, sequel] as [ManagedObject] {
            #expect(object.context === context)
            #expect(object.isInserted)
            #expect(context.registeredObject(for: object.objectID) === object)
        }
    }

    @Test func relatingAContextObjectToAStandaloneObjectInsertsIt() throws {
        let movie = Movie(context: context)
        let director = Person()
        movie.director = director
        #expect(director.context === context)
        #expect(director.isInserted)

        let actors = [Person(), Person()]
        movie.cast = actors
        #expect(actors.allSatisfy { $0.context === context })
        #expect(context.insertedObjects == Set([movie, director] + actors))
    }

    @Test func relatingAStandaloneObjectToAContextObjectInsertsIt() throws {
        let movie = Movie(context: context)
        let review = Review()
        review.movie = movie
        #expect(movie.reviews == [review])
        #expect(review.context === context)
        #expect(context.insertedObjects == [movie, review])

        let person = Person()
        person.directed = [movie]
        #expect(person.context === context)
        #expect(movie.director === person)
    }

    // MARK: Deleting

    @Test func deletingAnInsertedObjectRemovesIt() throws {
        let movie = Movie(context: context)
        let other = Movie(context: context)
        context.delete(movie)
        #expect(!movie.isInserted)
        #expect(!movie.isDeleted)
        #expect(movie.context == nil)
        #expect(context.insertedObjects == [other])
        #expect(context.deletedObjects.isEmpty)
        #expect(context.registeredObject(for: movie.objectID) == nil)
        let error = try #require(throws: StrataError.self) { try context.existingObject(with: movie.objectID) }
        #expect(error.code == .objectNotFound)

        context.delete(other)
        #expect(!context.hasChanges)
    }

    @Test func anObjectRemovedByDeletionCanBeInsertedAgain() throws {
        let movie = Movie(context: context)
        context.delete(movie)
        context.insert(movie)
        #expect(movie.isInserted)
        #expect(movie.context === context)
        #expect(context.insertedObjects == [movie])
        #expect(try context.existingObject(with: movie.objectID) === movie)
    }

    @Test func deletingASavedObjectMarksItDeleted() throws {
        let movie = makeSavedMovie()
        #expect(!movie.isInserted)
        #expect(context.insertedObjects.isEmpty)
        #expect(!context.hasChanges)

        context.delete(movie)
        #expect(movie.isDeleted)
        #expect(movie.hasChanges)
        #expect(!movie.isUpdated)
        #expect(movie.context === context)
        #expect(context.deletedObjects == [movie])
        #expect(context.insertedObjects.isEmpty)
        #expect(context.hasChanges)
        #expect(context.registeredObject(for: movie.objectID) === movie)
        let error = try #require(throws: StrataError.self) { try context.existingObject(with: movie.objectID) }
        #expect(error.code == .objectNotFound)
    }

    @Test func deletingAnObjectOfAnotherContextDoesNothing() throws {
        let other = ObjectContext(schema: context.schema)
        let movie = Movie(context: other)
        context.delete(movie)
        #expect(movie.isInserted)
        #expect(movie.context === other)
        #expect(other.insertedObjects == [movie])
    }

    // MARK: Updating

    @Test func changedSavedObjectsAreUpdated() throws {
        let movie = makeSavedMovie()
        let untouched = makeSavedMovie(title: "Ronin")
        #expect(context.updatedObjects.isEmpty)

        movie.rating = 8.3
        #expect(movie.isUpdated)
        #expect(context.updatedObjects == [movie])
        #expect(context.hasChanges)
        #expect(!untouched.hasChanges)

        movie.rating = 0
        #expect(context.updatedObjects.isEmpty)
        #expect(!context.hasChanges)
    }

    @Test func insertedObjectsAreNeverUpdated() throws {
        let movie = Movie(context: context)
        movie.title = "Heat"
        #expect(!movie.isUpdated)
        #expect(context.updatedObjects.isEmpty)
        #expect(context.insertedObjects == [movie])
    }

    @Test func relationshipChangesUpdateBothSavedSides() throws {
        let movie = makeSavedMovie()
        let person = Person(context: context)
        person.commitValues()
        #expect(!context.hasChanges)

        movie.director = person
        #expect(context.updatedObjects == [movie, person])
    }

    // MARK: Looking up

    @Test func unknownObjectIDsAreNotFound() throws {
        let id = ObjectID(entityName: "Movie")
        #expect(context.registeredObject(for: id) == nil)
        let error = try #require(throws: StrataError.self) { try context.existingObject(with: id) }
        #expect(error.code == .objectNotFound)
        #expect(error.objectID == id)
        #expect(error.entityName == "Movie")

        let permanent = ObjectID(entityName: "Movie", storeIdentifier: "STORE", primaryKey: 1)
        #expect(throws: StrataError.self) { try context.existingObject(with: permanent) }
    }

    @Test func standaloneObjectsAreNotInTheContext() throws {
        let movie = Movie()
        #expect(context.registeredObject(for: movie.objectID) == nil)
        #expect(throws: StrataError.self) { try context.existingObject(with: movie.objectID) }
    }

    // MARK: Value snapshots

    @Test func updateFromValueResolvesObjectIDsThroughTheContext() throws {
        let movie = Movie(context: context)
        let director = Person(context: context)
        let actors = [Person(context: context), Person(context: context), Person(context: context)]
        let review = Review(context: context)

        var value = movie.value
        #expect(value.objectID == movie.objectID)
        value.title = "Heat"
        value.director = director.objectID
        value.cast = [actors[2].objectID, actors[0].objectID, actors[1].objectID]
        value.reviews = [review.objectID]
        try movie.update(from: value)

        #expect(movie.title == "Heat")
        #expect(movie.director === director)
        #expect(director.directed == [movie])
        #expect(movie.cast.map(ObjectIdentifier.init) == [actors[2], actors[0], actors[1]].map(ObjectIdentifier.init))
        #expect(actors.allSatisfy { $0.actedIn == [movie] })
        #expect(movie.reviews == [review])
        #expect(review.movie === movie)
        #expect(movie.value == value)
    }

    @Test func updateFromValueWithAnUnknownObjectIDThrows() throws {
        let movie = Movie(context: context)
        var value = movie.value
        let stranger = ObjectID(entityName: "Person")
        value.director = stranger
        let error = try #require(throws: StrataError.self) { try movie.update(from: value) }
        #expect(error.code == .objectNotFound)
        #expect(error.objectID == stranger)
        #expect(movie.director == nil)

        var many = movie.value
        many.cast = [Person(context: context).objectID, ObjectID(entityName: "Person")]
        let manyError = try #require(throws: StrataError.self) { try movie.update(from: many) }
        #expect(manyError.code == .objectNotFound)
        #expect(movie.cast.isEmpty)
    }

    @Test func updateFromValueRejectsIDsOfAnotherEntity() throws {
        let movie = Movie(context: context)
        let review = Review(context: context)
        var value = movie.value
        value.director = review.objectID
        let error = try #require(throws: StrataError.self) { try movie.update(from: value) }
        #expect(error.code == .typeMismatch)
        #expect(error.propertyName == "director")
        #expect(try movie.value(forKey: "director") == nil)
        #expect(review.movie == nil)

        var many = movie.value
        many.cast = [review.objectID]
        #expect(throws: StrataError.self) { try movie.update(from: many) }
        #expect(try movie.value(forKey: "cast") as? [ManagedObject] == [])
    }

    @Test func updateFromValueOfAStandaloneObjectCannotResolveNewIDs() throws {
        let movie = Movie()
        let person = Person()
        var value = movie.value
        value.director = person.objectID
        let error = try #require(throws: StrataError.self) { try movie.update(from: value) }
        #expect(error.code == .objectNotFound)

        // IDs of objects the relationship already holds need no context.
        movie.director = person
        var same = movie.value
        same.title = "Heat"
        try movie.update(from: same)
        #expect(movie.director === person)
        #expect(movie.title == "Heat")
    }

    @Test func updateFromAnUnchangedValueChangesNothing() throws {
        let movie = makeSavedMovie()
        let reviews = [Review(context: context), Review(context: context), Review(context: context)]
        movie.reviews = Set(reviews)
        movie.cast = [Person(context: context)]
        for object in context.insertedObjects { object.commitValues() }
        movie.commitValues()
        #expect(!context.hasChanges)

        try movie.update(from: movie.value)
        var reordered = movie.value
        reordered.reviews = reordered.reviews.reversed()
        try movie.update(from: reordered)
        #expect(!movie.hasChanges)
        #expect(!context.hasChanges)

        var edited = movie.value
        edited.rating = 9
        try movie.update(from: edited)
        #expect(Array(movie.changedValues().keys) == ["rating"])
    }

    @Test func valueSnapshotsAreCodable() throws {
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.tags = ["crime"]
        movie.director = Person(context: context)
        let value = movie.value
        let decoded = try JSONDecoder().decode(Movie.Value.self, from: JSONEncoder().encode(value))
        #expect(decoded == value)
        #expect(decoded.director == movie.director?.objectID)
        #expect(decoded.tags == ["crime"])
    }

    // MARK: Object IDs

    @Suite struct ObjectIDs {
        @Test(arguments: ["Movie", "Car", "_Private", "Café"])
        func temporaryIDRoundTripsThroughItsURI(_ entityName: String) throws {
            let uuid = UUID()
            let id = ObjectID(entityName: entityName, temporary: uuid)
            #expect(id.isTemporaryID)
            #expect(id.primaryKey == nil)
            #expect(id.storeIdentifier == nil)
            let uri = id.uriRepresentation
            #expect(uri.scheme == "strata")
            #expect(uri.host == "temporary")
            let parsed = try #require(ObjectID(uriRepresentation: uri))
            #expect(parsed == id)
            #expect(parsed.entityName == entityName)
            #expect(ObjectID(uriRepresentation: try #require(URL(string: id.description))) == id)
        }

        @Test func temporaryURIHasTheDocumentedForm() throws {
            let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            let id = ObjectID(entityName: "Movie", temporary: uuid)
            #expect(
                id.uriRepresentation.absoluteString == "strata://temporary/Movie/tE621E1F8-C36C-495A-93FC-0C247A3E6E5F")
            #expect(id.description == id.uriRepresentation.absoluteString)
        }

        @Test(arguments: [Int64.min, -1, 0, 1, 42, Int64.max])
        func permanentIDRoundTripsThroughItsURI(_ primaryKey: Int64) throws {
            let store = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
            let id = ObjectID(entityName: "Movie", storeIdentifier: store, primaryKey: primaryKey)
            #expect(!id.isTemporaryID)
            #expect(id.primaryKey == primaryKey)
            #expect(id.storeIdentifier == store)
            #expect(id.uriRepresentation.absoluteString == "strata://\(store)/Movie/p\(primaryKey)")
            let parsed = try #require(ObjectID(uriRepresentation: id.uriRepresentation))
            #expect(parsed == id)
            #expect(parsed.storeIdentifier == store)
            #expect(parsed.primaryKey == primaryKey)
        }

        @Test func idsDifferByEveryPart() {
            let uuid = UUID()
            #expect(ObjectID(entityName: "Movie", temporary: uuid) == ObjectID(entityName: "Movie", temporary: uuid))
            #expect(ObjectID(entityName: "Movie", temporary: uuid) != ObjectID(entityName: "Review", temporary: uuid))
            #expect(ObjectID(entityName: "Movie") != ObjectID(entityName: "Movie"))
            let a = ObjectID(entityName: "Movie", storeIdentifier: "A", primaryKey: 1)
            #expect(a == ObjectID(entityName: "Movie", storeIdentifier: "A", primaryKey: 1))
            #expect(a != ObjectID(entityName: "Movie", storeIdentifier: "B", primaryKey: 1))
            #expect(a != ObjectID(entityName: "Movie", storeIdentifier: "A", primaryKey: 2))
            #expect(Set([a, a, ObjectID(entityName: "Movie", storeIdentifier: "A", primaryKey: 2)]).count == 2)
        }

        @Test func idsOfCanonicallyEquivalentNamesAreEqualAndHashAlike() {
            // "Café" precomposed (NFC) and decomposed (NFD) are one name to Swift's `==`.
            let composed = ObjectID(entityName: "Caf\u{E9}", storeIdentifier: "A", primaryKey: 1)
            let decomposed = ObjectID(entityName: "Cafe\u{301}", storeIdentifier: "A", primaryKey: 1)
            #expect(composed == decomposed)
            #expect(composed.hashValue == decomposed.hashValue)
            #expect(Set([composed, decomposed]).count == 1)
        }

        @Test func idsOfEntitiesSharingPrimaryKeysHashApart() {
            // Every entity numbers its rows from 1: a set or identity map of many entities'
            // objects must not put all the objects with one key in one bucket.
            let names = (0..<50).map { "Entity\($0)" }
            let ids = names.flatMap { name in
                (1...20).map { ObjectID(entityName: name, storeIdentifier: "A", primaryKey: $0) }
            }
            #expect(Set(ids).count == 1_000)
            let hashes = Set(ids.map(\.hashValue))
            #expect(hashes.count == 1_000)
            let decoded = ids.compactMap { ObjectID(uriRepresentation: $0.uriRepresentation) }
            #expect(decoded == ids)
            #expect(decoded.map(\.hashValue) == ids.map(\.hashValue))
        }

        @Test(arguments: [
            "http://temporary/Movie/tE621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "strata://temporary/Movie/tnot-a-uuid",
            "strata://temporary/Movie/p12",
            "strata://STORE/Movie/tE621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "strata://STORE/Movie/pabc",
            "strata://STORE/Movie/p",
            "strata://STORE/Movie/x12",
            "strata://STORE/Movie",
            "strata://STORE/Movie/p1/extra",
            "strata:///Movie/p1",
        ])
        func malformedURIsAreRejected(_ text: String) throws {
            let url = try #require(URL(string: text))
            #expect(ObjectID(uriRepresentation: url) == nil)
        }

        @Test func objectIDsAreCodableAsTheirURIString() throws {
            let ids = [
                ObjectID(entityName: "Movie"),
                ObjectID(entityName: "Review", storeIdentifier: "3F2504E0-4F89-11D3-9A0C-0305E82C3301", primaryKey: 7),
            ]
            let data = try JSONEncoder().encode(ids)
            let strings = try JSONDecoder().decode([String].self, from: data)
            #expect(strings == ids.map(\.uriRepresentation.absoluteString))
            #expect(try JSONDecoder().decode([ObjectID].self, from: data) == ids)
        }

        @Test func decodingAStringThatIsNoObjectIDThrows() throws {
            let data = Data(#"["https://example.com/Movie/p1"]"#.utf8)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectID].self, from: data) }
        }

        @Test func typedObjectIDWrapsTheObjectsID() throws {
            let movie = Movie()
            let typed: TypedObjectID<Movie> = movie.typedObjectID
            #expect(typed.objectID == movie.objectID)
            #expect(typed.description == movie.objectID.description)
            #expect(typed == TypedObjectID<Movie>(movie.objectID))
            #expect(typed != Movie().typedObjectID)
            let decoded = try JSONDecoder().decode(TypedObjectID<Movie>.self, from: JSONEncoder().encode(typed))
            #expect(decoded == typed)
            #expect(decoded.objectID.entityName == "Movie")
        }

        @Test func typedObjectIDLooksUpItsObject() throws {
            let context = ObjectContext(schema: try Schema([Movie.self]))
            let movie = Movie(context: context)
            let typed = movie.typedObjectID
            #expect(try context.existingObject(with: typed.objectID) as? Movie === movie)
        }
    }
}
