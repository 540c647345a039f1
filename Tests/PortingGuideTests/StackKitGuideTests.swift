import Foundation
import Strata
import StrataTesting
import Testing

/// The model of the stack kit's samples.
enum StackGuide {
    @Entity final class Person: ManagedObject {
        var name: String = ""
        var country: String = ""
        var jobTitle: String = ""
        var yearsOfExperience: Int = 0
        var age: Int = 0
    }
}

/// The stack kit (MHCoreDataKit) samples of the porting guide.
@Suite(.serialized) struct StackKitGuideTests {
    typealias Person = StackGuide.Person

    @Test func theDefaultStack() throws {
        let folder = try TemporaryDirectory()
        let storesFolder = folder.url   // the folder CoreDataStores/ goes in; by default the data folder
        // sample: DefaultCoreDataStack
        let modelName = "Movies"
        let modelBundle = Bundle.module
        let stack = try DefaultCoreDataStack(
            modelName: modelName, modelBundle: modelBundle, storeType: .sqlite, configurationName: nil,
            storeName: nil, options: nil, in: storesFolder)
        let mainContext = stack.context
        // end sample
        let store = try #require(mainContext.container?.persistentStore(named: "Movies"))
        #expect(store.url?.path == storesFolder.path + "/CoreDataStores/Default/Movies/Movies.sqlite")
    }

    @Test func entityObservers() throws {
        let container = try PersistentContainer(name: "People", entities: [Person.self], storeDescriptions: [.inMemory])
        let context = container.newBackgroundContext()
        let counts = Counts(3)
        // sample: Entity observers
        let observer = EntityObserver<Person>(context: context)
        observer.observeChanges { inserted, updated, deleted in
            // handle any changes (upon didSave)
            counts.add(inserted.count + updated.count + deleted.count, at: 0)
        }
        // Only one kind of change:
        observer.observeChanges(for: .inserted) { inserted, _, _ in
            counts.add(inserted.count, at: 1)
        }
        // Objects about to be deleted:
        observer.observeChanges(upon: .willSave, for: .deleted) { _, _, deleted in
            counts.add(deleted.count, at: 2)
        }
        // end sample
        let person = Person(context: context)
        try context.save()
        context.delete(person)
        try context.save()
        #expect(counts.all == [2, 1, 1])
    }

    @Test func entityLookupByClass() throws {
        let container = try PersistentContainer(name: "People", entities: [Person.self], storeDescriptions: [.inMemory])
        let context = container.newBackgroundContext()
        // sample: Entity lookup by class
        let inserted = try Person(insertingInto: context)
        let notInserted = try Person(context: context, insert: false)
        let request = Person.makeFetchRequest()              // FetchRequest<Person>
        let observer = Person.makeObserver(with: context)    // EntityObserver<Person>; nil for all contexts
        // end sample
        #expect(inserted.isInserted && !notInserted.isInserted)
        #expect(try context.fetch(request).count == 1)
        #expect(observer.context === context)
        #expect(Person.entityName() == "Person")
    }

    @Test func fetchRequestBuilders() throws {
        let container = try PersistentContainer(name: "People", entities: [Person.self], storeDescriptions: [.inMemory])
        let context = container.newBackgroundContext()
        for (name, country, title, years) in [
            ("John", "Canada", "Senior", 9), ("John", "Chile", "Junior", 1), ("Ann", "Canada", "Lead", 12),
        ] {
            let person = Person(context: context)
            (person.name, person.country, person.jobTitle, person.yearsOfExperience) = (name, country, title, years)
        }
        let customPredicate: FetchPredicate<Person> = \.yearsOfExperience > 5
        // sample: Fetch request builders
        // All persons:
        let allPersons: [Person] = try Person.makeFetchRequest().fetchingAll().execute(with: context)
        // Persons named John:
        let johnPersons = try Person.makeFetchRequest().fetchingBy(key: "name", value: "John").execute(with: context)
        // Persons named John from Canada:
        let result = try Person.makeFetchRequest().fetchingBy(pairs: ["name": "John", "country": "Canada"]).execute(with: context)
        // Senior or Lead persons, by years of experience:
        let experiencedPersons = try Person.makeFetchRequest()
            .fetchingFor(key: "jobTitle", values: ["Senior", "Lead"])
            .sortedBy(key: "yearsOfExperience")
            .execute(with: context)
        // Each builder sets the predicate (the last one wins); set your own with configured(with:).
        let custom = try Person.makeFetchRequest().configured(with: customPredicate).execute(with: context)
        // end sample
        #expect(allPersons.count == 3)
        #expect(johnPersons.count == 2)
        #expect(result.map(\.country) == ["Canada"])
        #expect(experiencedPersons.map(\.yearsOfExperience) == [9, 12])
        #expect(custom.count == 2)
    }

    @Test func modelsByName() throws {
        // sample: A model found by name
        let container = try PersistentContainer(name: "Movies", bundle: .module, storeDescriptions: [.inMemory])
        let schema = try Schema.named("Movies", in: .module)   // the kit's NSManagedObjectModel(name:bundle:)
        // end sample
        #expect(container.schema.entity(named: "Movie") != nil)
        #expect(schema.entity(named: "Review") != nil)
    }

    @Test func storeLocations() throws {
        let folder = try TemporaryDirectory()
        let applicationSupport = folder.url
        // sample: Store locations
        // SQLiteStore.defaultDirectory = myFolder            // at launch, to place every store elsewhere
        let common = try SQLiteStore.commonDirectory(in: applicationSupport)   // …/CoreDataStores, created
        let folderURL = try SQLiteStore.directory(forStoreName: "Movies", configurationName: nil, in: applicationSupport)
        let url = try SQLiteStore.url(forStoreName: "Movies", in: applicationSupport)  // …/Default/Movies/Movies.sqlite
        try SQLiteStore.delete(forStoreName: "Movies", in: applicationSupport)        // the store's folder, every file in it
        try SQLiteStore.deleteAll(in: applicationSupport)                             // every store
        // end sample
        #expect(common.path == applicationSupport.path + "/CoreDataStores")
        #expect(folderURL.path == common.path + "/Default/Movies")
        #expect(url.path == folderURL.path + "/Movies.sqlite")
        #expect(!FileManager.default.fileExists(atPath: common.path))
    }

    @Test func storesByName() throws {
        let folder = try TemporaryDirectory()
        let schema = try Schema([Person.self])
        let container = try PersistentContainer(name: "People", schema: schema, storeDescriptions: [])
        let applicationSupport = folder.url
        // sample: Stores by name
        try container.addPersistentStore(ofType: .sqlite, configurationName: nil, storeName: "People", in: applicationSupport, options: nil)
        let store = container.persistentStore(named: "People", configurationName: nil)
        try container.removePersistentStore(named: "People", configurationName: nil)
        try container.removePersistentStores(forConfigurationName: nil)
        try container.removeAllPersistentStores()
        // end sample
        #expect(store?.url?.lastPathComponent == "People.sqlite")
        #expect(container.stores.isEmpty)
    }
}
