import Foundation
import Observation
import Strata
import Synchronization
import Testing

/// The SwiftUI note (Chinese): a `Managed` protocol with default sort descriptors and typed
/// fetch requests, a typed insert, `NSPersistentContainer(name:)`, and a list driven by a
/// fetched results controller. SwiftUI itself is Apple-only: these are the view models' parts.
enum SwiftUIGuide {
    // sample: Declaring the model with a default order
    @Entity final class Article: ManagedObject, DefaultSortable {
        var content: String = ""
        var type: Int16 = 0
        var uid: Int32 = 0
        var avatarImage: Int16 = 0
        var avatarColor: Int16 = 0
        internal var createdAt: Date = Date(timeIntervalSince1970: 0)

        // The Managed protocol's default order; entityName() comes with every @Entity class.
        static var defaultSortDescriptors: [FetchSortDescriptor<Article>] { [.descending(\.createdAt)] }
    }
    // end sample

    /// A class the containers of these samples do not list.
    @Entity final class Comment: ManagedObject {
        var text: String = ""
    }

    // sample: A manager driven by a fetched results controller
    @Observable final class ArticleManager: FetchedResultsControllerDelegate {
        private(set) var articles: [Article] = []
        @ObservationIgnored private let fetchedResultsController: FetchedResultsController<Article>

        init(context: ObjectContext) throws {
            var request = Article.sortedFetchRequest
            request.fetchBatchSize = 20
            fetchedResultsController = FetchedResultsController(request, context: context)
            fetchedResultsController.delegate = self
            try fetchedResultsController.performFetch()
            articles = fetchedResultsController.fetchedObjects
        }

        func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) {
            articles = controller.fetchedObjects
        }
    }
    // end sample
}

// sample: Inserting from a view model
extension SwiftUIGuide.Article {
    struct ViewModel {
        var content: String
        var avatarColor: Int
        var avatarImage: Int
        var type: Int
    }

    static func insert(viewModel: ViewModel, into context: ObjectContext) throws -> Self {
        let article: Self = try context.insertObject()
        article.content = viewModel.content
        article.avatarColor = Int16(viewModel.avatarColor)
        article.avatarImage = Int16(viewModel.avatarImage)
        article.type = Int16(viewModel.type)
        article.uid = Int32(2015011206)
        article.createdAt = Date()
        return article
    }
}
// end sample

extension SwiftUIGuide {
    static func makeContainer() throws -> PersistentContainer {
        try PersistentContainer(name: "MASDataModel", entities: [Article.self], storeDescriptions: [.inMemory])
    }

    /// Inserts an article created `day` days after 1970.
    static func insertArticle(_ content: String, day: Double, type: Int16 = 0, into context: ObjectContext) throws {
        let article: Article = try context.insertObject()
        article.content = content
        article.type = type
        article.createdAt = Date(timeIntervalSince1970: day * 86_400)
    }

    /// Records that an observed property changed (`withObservationTracking`'s `onChange` is `@Sendable`).
    final class ChangeFlag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    @Suite(.timeLimit(.minutes(10))) struct Samples {
        @Test func declaringTheModelWithADefaultOrder() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()
            try insertArticle("old", day: 1, into: context)
            try insertArticle("new", day: 3, into: context)
            try insertArticle("middle", day: 2, into: context)
            let article: Article = try context.insertObject()
            article.content = "Hello"
            article.uid = 2015011206
            try context.save()

            #expect(Article.entityName() == "Article")  // the Managed protocol's entityName
            let request = Article.sortedFetchRequest
            #expect(request.entityName == "Article")
            let stored = try container.newBackgroundContext().fetch(request)
            #expect(stored.map(\.content) == ["new", "middle", "old", "Hello"])
            #expect(stored.last?.uid == 2015011206)
        }

        @Test func fetchingWithTheDefaultOrder() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()
            try insertArticle("old", day: 1, type: 1, into: context)
            try insertArticle("new", day: 3, into: context)
            try insertArticle("middle", day: 2, type: 1, into: context)
            try context.save()

            // sample: Fetching with the default order
            let articles = try context.fetch(Article.sortedFetchRequest)  // newest first
            let flagged = try context.fetch(Article.sortedFetchRequest(where: \.type == 1))
            // end sample
            #expect(articles.map(\.content) == ["new", "middle", "old"])
            #expect(flagged.map(\.content) == ["middle", "old"])
        }

        @Test func openingTheContainerByName() throws {
            // sample: Opening the container by name
            // Ship the source model as a resource: .copy("Movies.xcdatamodeld") in Package.swift.
            let container = try PersistentContainer(name: "Movies", bundle: .module, storeDescriptions: [.inMemory])
            // end sample
            #expect(container.name == "Movies")
            #expect(Set(container.schema.entities.map(\.name)) == ["Movie", "Review"])

            // A model read from a file has no classes of its own: its objects are read and written by key.
            let context = container.newBackgroundContext()
            let entity = try #require(container.schema.entity(named: "Movie"))
            let movie = ManagedObject(entity: entity)
            context.insert(movie)
            try movie.setValue("Heat", forKey: "title")
            try context.save()
            let stored = try container.newBackgroundContext().fetch(entityName: "Movie")
            #expect(try stored.map { try $0.value(forKey: "title") as? String } == ["Heat"])

            #expect(throws: StrataError.self) {
                try PersistentContainer(name: "MASDataModel", bundle: .module, storeDescriptions: [.inMemory])
            }
        }

        @Test func insertingWithATypedInsert() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()

            // sample: Inserting with a typed insert
            let article: Article = try context.insertObject()
            article.content = "Hello"
            article.createdAt = Date()
            try context.save()  // throws instead of returning false
            // end sample
            #expect(try container.newBackgroundContext().fetch(Article.self).map(\.content) == ["Hello"])

            // A class the context's schema does not have is an error, not a crash.
            let error = #expect(throws: StrataError.self) {
                let _: Comment = try context.insertObject()
            }
            #expect(error?.code == .unknownEntity)
        }

        @Test func insertingFromAViewModel() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()
            let before = Date()

            let article = try Article.insert(
                viewModel: Article.ViewModel(content: "Hi", avatarColor: 2, avatarImage: 3, type: 1), into: context)
            try context.save()

            let stored = try #require(try container.newBackgroundContext().fetch(Article.self).first)
            #expect(stored.objectID == article.objectID)
            #expect(stored.content == "Hi" && stored.avatarColor == 2 && stored.avatarImage == 3 && stored.type == 1)
            #expect(stored.uid == 2015011206)
            #expect(stored.createdAt >= before.addingTimeInterval(-1))
        }

        @Test @MainActor func aManagerDrivenByAFetchedResultsController() throws {
            let container = try makeContainer()
            let context = container.viewContext
            try insertArticle("old", day: 1, into: context)
            try context.save()

            let manager = try ArticleManager(context: context)
            #expect(manager.articles.map(\.content) == ["old"])

            // What a SwiftUI view reading `manager.articles` would be told.
            let changed = ChangeFlag()
            withObservationTracking { _ = manager.articles } onChange: { changed.set() }
            try insertArticle("new", day: 2, into: context)
            try context.save()
            #expect(changed.isSet)
            #expect(manager.articles.map(\.content) == ["new", "old"])
        }

        @Test @MainActor func observableFetchedResults() async throws {
            let container = try makeContainer()
            let context = container.viewContext
            try insertArticle("old", day: 1, into: context)
            try context.save()

            // sample: Observable fetched results
            context.automaticallyMergesChangesFromContainer = true  // follow other contexts' saves too
            let results = try ObservableFetchedResults(FetchedResultsController(Article.sortedFetchRequest, context: context))
            // A SwiftUI view reads results.objects: List(results.objects, id: \.createdAt) { … }
            // end sample
            #expect(results.objects.map(\.content) == ["old"])

            let changed = ChangeFlag()
            withObservationTracking { _ = results.objects } onChange: { changed.set() }
            // Another context's save: the view context merges it, and the results follow.
            try await container.performBackgroundTask { background in
                try SwiftUIGuide.insertArticle("new", day: 2, into: background)
                try background.save()
            }
            for _ in 0..<100 where !changed.isSet { try await Task.sleep(for: .milliseconds(10)) }
            #expect(changed.isSet)
            #expect(results.objects.map(\.content) == ["new", "old"])
        }
    }
}
