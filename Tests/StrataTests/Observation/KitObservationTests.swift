import Foundation
import StrataTesting
import Testing

@testable import Strata

/// A model of its own, so that observers of every context see no other suite's saves.
enum ObservedModel {
    @Entity final class Person: ManagedObject {
        var firstName: String = ""
        var lastName: String = ""
        var age: Int = 0
    }
}

/// The observation the kits rely on: the stack kit's entity observers (its tests ported) in one
/// context or all of them, `objectsDidChange` posted by itself, refreshed objects, and one
/// object observed with its related objects.
@Suite(.serialized, .timeLimit(.minutes(10))) struct KitObservationTests {
    typealias Person = ObservedModel.Person

    let container: PersistentContainer

    init() throws {
        container = try PersistentContainer(name: "Observed", entities: [Person.self], storeDescriptions: [.inMemory])
    }

    /// What a handler saw: counts and first names, sorted.
    final class Seen: Sendable {
        let calls = LockedBox<[(inserted: [String], updated: [String], deleted: [String])]>([])
        func record(_ inserted: [Person], _ updated: [Person], _ deleted: [Person]) {
            let names = { (people: [Person]) in people.map(\.firstName).sorted() }
            let call = (names(inserted), names(updated), names(deleted))
            calls.withLock { $0.append(call) }
        }
        var all: [(inserted: [String], updated: [String], deleted: [String])] { calls.withLock { $0 } }
    }

    @discardableResult
    func person(_ firstName: String, _ age: Int, in context: ObjectContext) throws -> Person {
        let person = try Person(insertingInto: context)
        person.firstName = firstName
        person.lastName = "Doe"
        person.age = age
        return person
    }

    @Test func insertUpdateAndDeleteAsTheKitTestsThem() throws {
        let context = container.newBackgroundContext()
        let inserts = Seen(), updates = Seen(), deletes = Seen()
        let insertObserver = EntityObserver<Person>(context: context).observeChanges(for: .inserted) { inserts.record($0, $1, $2) }
        let updateObserver = EntityObserver<Person>(context: context).observeChanges(for: .updated) { updates.record($0, $1, $2) }
        let deleteObserver = Person.makeObserver(with: context).observeChanges(for: .deleted) { deletes.record($0, $1, $2) }

        let genadi = try person("Genadi", 27, in: context)
        let kuncho = try person("Kuncho", 17, in: context)
        try person("Strahil", 21, in: context)
        try context.save()
        genadi.firstName = "Grigor"
        kuncho.age = 18
        try context.save()
        context.delete(genadi)
        context.delete(kuncho)
        try context.save()

        #expect(inserts.all.map(\.inserted) == [["Genadi", "Kuncho", "Strahil"]])
        #expect(inserts.all.allSatisfy { $0.updated.isEmpty && $0.deleted.isEmpty })
        #expect(updates.all.map(\.updated) == [["Grigor", "Kuncho"]])
        #expect(deletes.all.map(\.deleted) == [["Grigor", "Kuncho"]])
        withExtendedLifetime((insertObserver, updateObserver, deleteObserver)) {}
    }

    @Test func filterCounts() throws {
        // The kit's testFilter: people of 18 and over, any change, upon didSave.
        let context = container.newBackgroundContext()
        let seen = Seen()
        let observer = EntityObserver<Person>(context: context).observeChanges(for: .any, filter: { $0.age >= 18 }) {
            seen.record($0, $1, $2)
        }
        let p1 = try person("Genadi", 27, in: context)
        let p2 = try person("Kuncho", 17, in: context)
        let p3 = try person("Strahil", 21, in: context)
        let p4 = try person("Young", 14, in: context)
        try context.save()
        p2.firstName = "zelen"
        p3.lastName = "vrat"
        context.delete(p1)
        context.delete(p4)
        try context.save()
        #expect(seen.all.map { [$0.inserted.count, $0.updated.count, $0.deleted.count] } == [[2, 0, 0], [0, 1, 1]])
        observer.cancel()
        try person("After", 30, in: context)
        try context.save()
        #expect(seen.all.count == 2)
    }

    @Test func willSaveReportsWhatIsAboutToGo() throws {
        let context = container.newBackgroundContext()
        let seen = Seen()
        let observer = EntityObserver<Person>(context: context).observeChanges(upon: .willSave, for: .deleted) { seen.record($0, $1, $2) }
        let doomed = try person("Doomed", 40, in: context)
        try context.save()
        context.delete(doomed)
        #expect(seen.all.isEmpty)
        try context.save()
        #expect(seen.all.map(\.deleted) == [["Doomed"]])
        withExtendedLifetime(observer) {}
    }

    @Test func anObserverWithoutAContextHearsEveryContext() async throws {
        let seen = Seen()
        let mine: @Sendable (Person) -> Bool = { [container] in $0.context?.container === container }
        let observer = Person.makeObserver().observeChanges(for: .any, filter: mine) { seen.record($0, $1, $2) }
        try await container.performBackgroundTask { context in
            let person = try Person(insertingInto: context)
            person.firstName = "Background"
            try context.save()
        }
        let other = container.newBackgroundContext()
        try person("Other", 33, in: other)
        try other.save()
        #expect(seen.all.map(\.inserted) == [["Background"], ["Other"]])  // didSave by default
        // Another container's saves pass the hub too; the filter keeps this one's.
        let elsewhere = try PersistentContainer(name: "Elsewhere", entities: [Person.self], storeDescriptions: [.inMemory])
        let outside = elsewhere.newBackgroundContext()
        try person("Outside", 50, in: outside)
        try outside.save()
        #expect(seen.all.count == 2)
        observer.cancel()
        try person("Unheard", 20, in: other)
        try other.save()
        #expect(seen.all.count == 2)
    }

    @Test @MainActor func theViewContextAnnouncesItsChangesAtTheEndOfTheTurn() async throws {
        let context = container.viewContext
        let changes = LockedBox<[Int]>([])
        let observation = context.addObserver(for: .objectsDidChange) { notification in
            changes.withLock { $0.append(notification.insertedObjects.count) }
        }
        try person("One", 1, in: context)
        try person("Two", 2, in: context)
        #expect(changes.withLock { $0 }.isEmpty)  // not yet: the turn goes on
        for _ in 0..<50 where changes.withLock({ $0 }).isEmpty { await Task.yield() }
        #expect(changes.withLock { $0 } == [2])  // once, with both
        withExtendedLifetime(observation) {}
    }

    @Test func aBackgroundTaskAnnouncesUnsavedChangesWhenItEnds() async throws {
        let changes = LockedBox<[Int]>([])
        let observation = LockedBox<ContextObservation?>(nil)
        try await container.performBackgroundTask { context in
            let registration = context.addObserver(for: .objectsDidChange) { notification in
                changes.withLock { $0.append(notification.insertedObjects.count) }
            }
            observation.withLock { $0 = registration }
            let person = try Person(insertingInto: context)
            person.firstName = "Unsaved"
            #expect(changes.withLock { $0 }.isEmpty)
        }
        #expect(changes.withLock { $0 } == [1])
    }

    @Test func refreshedObjectsAreReported() async throws {
        let writer = container.newBackgroundContext()
        let saved = try person("Saved", 30, in: writer)
        try writer.save()

        let reader = container.newBackgroundContext()
        let mine = try reader.existing(Person.self, withID: saved.objectID)
        let refreshed = LockedBox<[[String]]>([])
        let updated = LockedBox<[[String]]>([])
        let observation = reader.addObserver(for: .objectsDidChange) { notification in
            refreshed.withLock { $0.append(notification.refreshedObjects.compactMap { ($0 as? Person)?.firstName }) }
            updated.withLock { $0.append(notification.updatedObjects.compactMap { ($0 as? Person)?.firstName }) }
        }
        var stream = reader.changes(for: [.objectsDidChange]).makeAsyncIterator()
        reader.refresh(mine, mergeChanges: true)
        reader.processPendingChanges()
        let streamed = await stream.next()
        #expect(streamed?.refreshedObjectIDs == [saved.objectID])
        #expect(streamed?.isEmpty == false)
        #expect(refreshed.withLock { $0 } == [["Saved"]])
        #expect(updated.withLock { $0 } == [[]])  // a refresh is not an edit

        saved.age = 31
        try writer.save()
        let changes = try #require(writer.container?.savedChangesSnapshot(of: saved))
        reader.mergeChanges(from: changes)
        #expect(refreshed.withLock { $0 }.last == ["Saved"])
        #expect(updated.withLock { $0 }.last == ["Saved"])
        #expect(mine.age == 31)
        withExtendedLifetime(observation) {}
    }

    @Test func oneObjectWithItsRelatedObjectsOneOrTwoLevelsDeep() async throws {
        let schools = try PersistentContainer(name: "Schools", entities: SchoolModel.types, storeDescriptions: [.inMemory])
        let context = schools.newBackgroundContext()
        let school = SchoolModel.School(context: context)
        school.name = "Hogwarts"
        let teacher = SchoolModel.Teacher(context: context)
        teacher.firstName = "Minerva"
        school.teacher = teacher
        let course = SchoolModel.Course(context: context)
        course.title = "Transfiguration"
        teacher.courses = [course]
        try context.save()

        var shallow = schools.observe(school.typedObjectID, includingRelatedObjects: true).makeAsyncIterator()
        var deep = schools.observe(school.typedObjectID, includingRelatedObjects: true, depth: 2).makeAsyncIterator()
        var own = schools.observe(school.typedObjectID).makeAsyncIterator()
        var unbounded = schools.observe(school.typedObjectID, includingRelatedObjects: true, depth: .max).makeAsyncIterator()
        #expect(try await unbounded.next()?.name == "Hogwarts")  // stops where the graph ends
        #expect(try await shallow.next()?.name == "Hogwarts")
        #expect(try await deep.next()?.name == "Hogwarts")
        #expect(try await own.next()?.name == "Hogwarts")

        // What each depth covers: a course is two steps from the school.
        let before = (RelatedObjectsFingerprint.of(school, depth: 1), RelatedObjectsFingerprint.of(school, depth: 2))
        course.title = "Advanced Transfiguration"
        #expect(RelatedObjectsFingerprint.of(school, depth: 1) == before.0)
        #expect(RelatedObjectsFingerprint.of(school, depth: 2) != before.1)
        // Two levels away: only the deep observation reports it.
        try context.save()
        #expect(try await deep.next()?.name == "Hogwarts")
        // One level away: both related observations report it.
        teacher.firstName = "Professor McGonagall"
        try context.save()
        #expect(try await shallow.next()?.name == "Hogwarts")
        #expect(try await deep.next()?.name == "Hogwarts")
        // The school itself: everyone. The shallow one got nothing from the course change.
        school.name = "Hogwarts School"
        try context.save()
        #expect(try await shallow.next()?.name == "Hogwarts School")
        #expect(try await deep.next()?.name == "Hogwarts School")
        #expect(try await own.next()?.name == "Hogwarts School")
    }
}

extension PersistentContainer {
    /// The `Sendable` changes of a saved object as another context would merge them.
    func savedChangesSnapshot(of object: ManagedObject) -> ContextChanges? {
        ContextChanges(
            name: .didSave, insertedObjectIDs: [], updatedObjectIDs: [object.objectID], deletedObjectIDs: [], author: nil,
            contextName: nil, isRemoteChange: false)
    }
}
