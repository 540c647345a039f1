import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Adding, finding and removing a container's stores by name and configuration, placed by the
/// store-location convention (the stack kit's coordinator extension).
@Suite struct StoresByNameTests {
    let directory: TemporaryDirectory
    let schema: Schema

    init() throws {
        directory = try TemporaryDirectory()
        schema = try Schema(
            [
                EntityDescription(name: "Note", attributes: [.init(name: "text", type: .string, defaultValue: "")]),
                EntityDescription(name: "Tag", attributes: [.init(name: "label", type: .string, defaultValue: "")]),
            ],
            configurations: ["Notes": ["Note"], "Tags": ["Tag"]])
    }

    /// The base folder stores go under (in `CoreDataStores/`).
    private var base: URL { directory.url }
    private var common: URL { directory.url.appendingPathComponent("CoreDataStores") }

    private func insert(_ entityName: String, _ key: String, _ value: String, in context: ObjectContext) throws
        -> ManagedObject
    {
        let object = ManagedObject(entity: try #require(schema.entity(named: entityName)))
        try object.setValue(value, forKey: key)
        context.insert(object)
        return object
    }

    @Test func storesAddedByNameLiveAtTheirConventionalURLsAndHoldTheirConfigurationsEntities() throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [])
        #expect(container.stores.isEmpty)
        let notes = try container.addPersistentStore(configurationName: "Notes", storeName: "Notes", in: base)
        let tags = try container.addPersistentStore(configurationName: "Tags", storeName: "Tags", in: base)
        #expect(notes.url?.path == common.path + "/Notes/Notes/Notes.sqlite")
        #expect(tags.url?.path == common.path + "/Tags/Tags/Tags.sqlite")

        let context = container.newBackgroundContext()
        let note = try insert("Note", "text", "Remember", in: context)
        let tag = try insert("Tag", "label", "todo", in: context)
        try context.save()
        #expect(note.objectID.storeIdentifier == notes.identifier)
        #expect(tag.objectID.storeIdentifier == tags.identifier)

        #expect(container.persistentStore(named: "Notes", configurationName: "Notes") === notes)
        #expect(container.persistentStore(named: "Tags", configurationName: "Tags") === tags)
        #expect(container.persistentStore(named: "Notes") == nil)  // the default configuration has none
        #expect(container.persistentStore(named: "Tags", configurationName: "Notes") == nil)
    }

    @Test func theSameNameAndConfigurationCannotBeAddedTwice() throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [])
        try container.addPersistentStore(storeName: "Everything", in: base)
        #expect(throws: StrataError.self) { try container.addPersistentStore(storeName: "Everything", in: base) }
        // In memory too, where two stores are never the same file.
        try container.addPersistentStore(ofType: .inMemory, configurationName: "Notes", storeName: "Cache")
        #expect(throws: StrataError.self) { try container.addPersistentStore(.inMemory(configuration: "Notes"), name: "Cache") }
        #expect(container.stores.count == 2)
        try container.removePersistentStore(named: "Cache", configurationName: "Notes")
        #expect(container.stores.count == 1)
        // The same name in another configuration is another store.
        try container.addPersistentStore(configurationName: "Tags", storeName: "Everything", in: base)
        #expect(container.stores.count == 2)
    }

    @Test func aStoreOpenedFromADescriptionAtTheConventionalURLIsFoundByName() throws {
        let url = try SQLiteStore.url(forStoreName: "Main", in: base)
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [.sqlite(url)])
        #expect(container.persistentStore(named: "Main") === container.stores[0])
        #expect(container.persistentStore(named: "Main", configurationName: Schema.defaultConfigurationName) === container.stores[0])
        #expect(container.persistentStore(named: "Other") == nil)
        #expect(container.persistentStore(named: "Main", configurationName: "Tags") == nil)

        let elsewhere = try PersistentContainer(
            name: "Notes", schema: schema, storeDescriptions: [.sqlite(directory.file("Main.sqlite"))])
        #expect(elsewhere.persistentStore(named: "Main") == nil)  // not placed by the convention
    }

    @Test func removingAStoreClosesItAndItsEntitiesGoToTheNextStoreThatHoldsThem() throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [])
        let tagsOnly = try container.addPersistentStore(configurationName: "Tags", storeName: "Tags", in: base)
        let everything = try container.addPersistentStore(ofType: .inMemory, storeName: "Everything")
        #expect(container.store(forEntityNamed: "Tag") === tagsOnly)
        #expect(container.store(forEntityNamed: "Note") === everything)

        let context = container.newBackgroundContext()
        _ = try insert("Tag", "label", "kept in Tags", in: context)
        try context.save()

        try container.removePersistentStore(named: "Tags", configurationName: "Tags")
        // A name that is not open is an error, as in the kit.
        let error = #expect(throws: StrataError.self) { try container.removePersistentStore(named: "Tags", configurationName: "Tags") }
        #expect(error?.code == .storeNotFound)
        #expect(container.stores.count == 1)
        #expect(container.store(forEntityNamed: "Tag") === everything)
        let reader = container.newBackgroundContext()
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 0)
        #expect(throws: StrataError.self) { try tagsOnly.count(StoreFetchRequest(entityName: "Tag")) }

        // Added again, the file still has its tag.
        let reopened = try container.addPersistentStore(configurationName: "Tags", storeName: "Tags", in: base)
        #expect(container.store(forEntityNamed: "Tag") === reopened)
        let labels = try container.newBackgroundContext().fetch(entityName: "Tag").map { try $0.value(forKey: "label") as? String }
        #expect(labels == ["kept in Tags"])
    }

    @Test func removingByConfigurationOrAllLeavesAnOpenContainerWithoutThoseStores() throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [])
        try container.addPersistentStore(configurationName: "Tags", storeName: "A", in: base)
        try container.addPersistentStore(ofType: .inMemory, configurationName: "Tags", storeName: "B")
        try container.addPersistentStore(ofType: .inMemory, storeName: "C")
        #expect(try container.removePersistentStores(forConfigurationName: "Tags") == 2)
        #expect(container.stores.map { container.persistentStore(named: "C") === $0 } == [true])
        #expect(try container.removeAllPersistentStores() == 1)
        #expect(container.stores.isEmpty)
        #expect(!container.isClosed)
        let context = container.newBackgroundContext()
        _ = try insert("Note", "text", "nowhere to go", in: context)
        #expect(throws: StrataError.self) { try context.save() }
        try container.addPersistentStore(ofType: .inMemory, storeName: "D")
        try context.save()
    }

    @Test func removingAStoreOfAnotherContainerIsATypedError() throws {
        let first = try PersistentContainer(name: "A", schema: schema, storeDescriptions: [.inMemory])
        let second = try PersistentContainer(name: "B", schema: schema, storeDescriptions: [.inMemory])
        let error = #expect(throws: StrataError.self) { try first.removePersistentStore(second.stores[0]) }
        #expect(error?.code == .noStore)
        #expect(first.stores.count == 1)
    }

    @Test func commitObserversAndMergingContextsSeeStoresAddedLater() async throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [])
        let commits = LockedBox(0)
        let observation = container.addCommitObserver { _ in commits.withLock { $0 += 1 } }
        try container.addPersistentStore(ofType: .inMemory, storeName: "Late")
        let context = container.newBackgroundContext()
        _ = try insert("Note", "text", "seen", in: context)
        try context.save()
        #expect(commits.withLock { $0 } == 1)
        observation.cancel()
        _ = try insert("Note", "text", "not seen", in: context)
        try context.save()
        #expect(commits.withLock { $0 } == 1)
    }

    @Test func addingToAClosedContainerFails() throws {
        let container = try PersistentContainer(name: "Notes", schema: schema, storeDescriptions: [.inMemory])
        try container.close()
        let error = #expect(throws: StrataError.self) { try container.addPersistentStore(ofType: .inMemory, storeName: "X") }
        #expect(error?.code == .storeClosed)
    }
}
