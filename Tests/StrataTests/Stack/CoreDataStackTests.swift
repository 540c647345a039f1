import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The stack kit's `CoreDataStack`, its default stack and the type-erased stack, with the kit's
/// own two tests ported.
@Suite struct CoreDataStackTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The kit extends `NSPersistentContainer` to be a `CoreDataStack`; so is a container, on
    /// the main actor.
    @Test @MainActor func aContainerIsAStackWhoseContextIsTheViewContext() async throws {
        let container = try PersistentContainer(
            name: "Films", entities: [Movie.self], storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Films.sqlite"))])
        func titles(in stack: some CoreDataStack) throws -> [String] {
            try stack.context.fetch(Movie.self).map(\.title)
        }
        #expect(container.context === container.viewContext)
        let main = container.createMainStack()
        #expect(main.context === container.viewContext)
        Movie(context: main.context).title = "Heat"
        try container.context.save()
        #expect(try titles(in: container) == ["Heat"])

        // A background stack has a context of its own on the same store, for another task.
        let background = container.createBackgroundStack()
        let fromTask = try await Task.detached {
            try background.performAndWait { context in
                #expect(context.parent == nil && context.container != nil)
                return try context.fetch(Movie.self).map(\.title)
            }
        }.value
        #expect(fromTask == ["Heat"])
        #expect(main.createBackgroundStack().context.container === container)
    }

    @Test func theTypeErasedStackCallsItsHandlers() throws {
        // The kit's testAnyStack: both handlers are called once.
        let schema = try Schema([EntityDescription(name: "Note")])
        let calls = LockedBox(0)
        var stack: (any CoreDataStack)?
        let context = ObjectContext(schema: schema)
        stack = AnyCoreDataStack(
            context: context,
            createBackgroundStackHandler: {
                calls.withLock { $0 += 1 }
                return AnyCoreDataStack(
                    context: ObjectContext(schema: schema),
                    createBackgroundStackHandler: { DefaultCoreDataStack(context: ObjectContext(schema: schema)) },
                    createMainStackHandler: {
                        calls.withLock { $0 += 1 }
                        return DefaultCoreDataStack(context: ObjectContext(schema: schema))
                    })
            },
            createMainStackHandler: { DefaultCoreDataStack(context: ObjectContext(schema: schema)) })
        _ = stack?.createBackgroundStack().createMainStack()
        #expect(calls.withLock { $0 } == 2)
        #expect(stack?.context === context)
    }

    @Test func theDefaultStacksSiblingsAreNewContextsOnTheSameStores() throws {
        // The kit's testDefaultStack.
        let model = try Schema.named("Movies", in: .module)
        let stack = try DefaultCoreDataStack(model: model, storeType: .inMemory, configurationName: nil, storeURL: nil, options: nil)
        #expect(stack.context.schema === model)
        let background = stack.createBackgroundStack()
        #expect(background.context.schema === model)
        let main = stack.createMainStack()
        #expect(main.context.schema === model)
        #expect(main.context !== stack.context)
        #expect(background.context !== main.context)

        // Siblings share the stores: one's save is the other's fetch.
        let movie = ManagedObject(entity: try #require(model.entity(named: "Movie")))
        background.context.insert(movie)
        try movie.setValue("Heat", forKey: "title")
        try background.context.save()
        #expect(try main.context.count(for: FetchRequest<ManagedObject>(entityName: "Movie")) == 1)
        #expect(main.context.container === stack.context.container)
    }

    @Test func aStackByModelNameOpensTheStoreWhereTheConventionPutsIt() throws {
        let common = directory.url.appendingPathComponent("CoreDataStores")
        let container = try PersistentContainer(name: "Movies", schema: try Schema.named("Movies", in: .module), storeDescriptions: [])
        try container.addPersistentStore(storeName: "Films", in: directory.url)
        #expect(container.stores.first?.url?.path == common.path + "/Default/Films/Films.sqlite")

        let stack = try DefaultCoreDataStack(modelName: "Movies", modelBundle: .module, storeType: .inMemory, storeName: "Films")
        #expect(stack.context.container?.name == "Movies")
        #expect(stack.context.container?.persistentStore(named: "Films") != nil)
        #expect(throws: StrataError.self) { try DefaultCoreDataStack(modelName: "NoSuchModel", modelBundle: .module) }
    }

    @Test func anSQLiteStackWithoutAURLIsATypedError() throws {
        let error = #expect(throws: StrataError.self) {
            try DefaultCoreDataStack(model: try Schema.named("Movies", in: .module), storeURL: nil)
        }
        #expect(error?.code == .storeError)
        let stack = try DefaultCoreDataStack(model: try Schema.named("Movies", in: .module), storeURL: directory.file("Movies.sqlite"))
        #expect(stack.context.container?.stores.first?.url == directory.file("Movies.sqlite"))
    }

    @Test func performAndPerformAndWaitRunWithTheStacksContext() throws {
        let stack = try DefaultCoreDataStack(model: try Schema.named("Movies", in: .module), storeType: .inMemory, storeURL: nil)
        var ran = false
        stack.perform { context in
            ran = context === stack.context
        }
        #expect(ran)  // already: the context belongs to the caller, nothing is scheduled
        let count = try stack.performAndWait { context in
            let movie = ManagedObject(entity: try #require(context.schema.entity(named: "Movie")))
            context.insert(movie)
            try movie.setValue("Ronin", forKey: "title")
            try context.save()
            return try context.count(for: FetchRequest<ManagedObject>(entityName: "Movie"))
        }
        #expect(count == 1)
        #expect(throws: StrataError.self) {
            try stack.performAndWait { context in try context.existingObject(with: ObjectID(entityName: "Movie", storeIdentifier: "nowhere", primaryKey: 1)) }
        }
    }

    @Test func aBackgroundStackMovesToAnotherTask() async throws {
        let stack = try DefaultCoreDataStack(model: try Schema.named("Movies", in: .module), storeType: .inMemory, storeURL: nil)
        let background = stack.createBackgroundStack()
        let saved = try await Task.detached {
            try background.performAndWait { context in
                let movie = ManagedObject(entity: try #require(context.schema.entity(named: "Movie")))
                context.insert(movie)
                try movie.setValue("Thief", forKey: "title")
                try context.save()
                return movie.objectID
            }
        }.value
        #expect(try stack.context.existingObject(with: saved).value(forKey: "title") as? String == "Thief")
    }
}
