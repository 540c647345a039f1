import Foundation
import Observation
import StrataTesting
import Testing

@testable import Strata

/// Records every batch a controller announces, with the result before and after it.
final class RecordingDelegate: FetchedResultsControllerDelegate {
    struct Batch {
        var before: [[ObjectID]]
        var beforeNames: [String]
        var change: FetchedResultsChange
        var after: [[ObjectID]]
        var afterNames: [String]
    }

    var calls: [String] = []
    var batches: [Batch] = []
    private var before: [[ObjectID]] = []
    private var beforeNames: [String] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<Movie>) {
        calls.append("will")
        before = controller.sections.map { $0.objects.map(\.objectID) }
        beforeNames = controller.sections.map(\.name)
    }

    func controller(
        _ controller: FetchedResultsController<Movie>, didChange section: FetchedResultsChange.SectionChange,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {
        calls.append("section \(type) \(sectionIndex) \(section.name)")
    }

    func controller(
        _ controller: FetchedResultsController<Movie>, didChange object: Movie, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        let from = indexPath.map { "\($0[0]).\($0[1])" } ?? "-"
        let to = newIndexPath.map { "\($0[0]).\($0[1])" } ?? "-"
        calls.append("\(type) \(object.title) \(from)>\(to)")
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<Movie>) {
        calls.append("did")
    }

    func controller(_ controller: FetchedResultsController<Movie>, didChangeContentWith change: FetchedResultsChange) {
        batches.append(
            Batch(
                before: before, beforeNames: beforeNames, change: change,
                after: controller.sections.map { $0.objects.map(\.objectID) }, afterNames: controller.sections.map(\.name)))
    }
}

/// Applies a change to the old sections the way a table view's batch update does, and returns
/// the sections it leads to (or `nil` when the change is not a valid batch update).
func applyAsTableView(_ change: FetchedResultsChange, to old: [[ObjectID]]) -> [[ObjectID]]? {
    let deletedSections = Set(change.deletedSections)
    var removed = Set(change.deletedIndexPaths)
    for move in change.movedIndexPaths {
        if deletedSections.contains(move.from[0]) { return nil }  // moving out of a deleted section
        removed.insert(move.from)
    }
    for path in removed where path[0] >= old.count || path[1] >= old[path[0]].count { return nil }
    for path in change.updatedIndexPaths where removed.contains(path) || deletedSections.contains(path[0]) { return nil }
    var remaining: [[ObjectID]] = []
    for (section, rows) in old.enumerated() where !deletedSections.contains(section) {
        remaining.append(rows.enumerated().filter { !removed.contains(IndexPath(indexes: [section, $0.offset])) }.map(\.element))
    }
    let insertedSections = Set(change.insertedSections)
    let sectionCount = remaining.count + insertedSections.count
    var new: [[ObjectID]] = []
    var next = remaining.makeIterator()
    for index in 0..<sectionCount {
        if insertedSections.contains(index) {
            new.append([])
        } else {
            guard let rows = next.next() else { return nil }
            new.append(rows)
        }
    }
    var placed: [IndexPath: ObjectID] = [:]
    for objectChange in change.objectChanges where objectChange.type == .insert || objectChange.type == .move {
        guard let path = objectChange.newIndexPath else { return nil }
        placed[path] = objectChange.objectID
    }
    // Objects of inserted sections are not listed: the test fills them from the target.
    var result: [[ObjectID]] = []
    for (section, rows) in new.enumerated() {
        let placedHere = placed.filter { $0.key[0] == section }
        if insertedSections.contains(section), !placedHere.isEmpty { return nil }
        var iterator = rows.makeIterator()
        var built: [ObjectID] = []
        let total = rows.count + placedHere.count
        for item in 0..<total {
            if let id = placedHere[IndexPath(indexes: [section, item])] {
                built.append(id)
            } else if let id = iterator.next() {
                built.append(id)
            } else {
                return nil
            }
        }
        result.append(built)
    }
    return result
}

@Suite struct FetchedResultsControllerTests {
    let library: MovieLibrary
    var container: PersistentContainer { library.container }

    init() throws {
        library = try MovieLibrary(movies: [
            ("Heat", 1995), ("Ronin", 1998), ("Thief", 1981), ("Collateral", 2004), ("Manhunter", 1986),
        ])
    }

    func movie(_ title: String, in context: ObjectContext) throws -> Movie {
        try #require(try context.fetch(Movie.self, where: \.title == title).first)
    }

    func titles(_ controller: FetchedResultsController<Movie>) -> [[String]] {
        controller.sections.map { $0.objects.map(\.title) }
    }

    /// Checks the controller against a fresh fetch and each recorded batch against the results
    /// it connects.
    func verify(_ controller: FetchedResultsController<Movie>, _ delegate: RecordingDelegate, in context: ObjectContext)
        throws
    {
        let fresh = FetchedResultsController(
            fetchRequest: controller.fetchRequest, context: context, sectionNameKeyPath: controller.sectionNameKeyPath)
        try fresh.performFetch()
        #expect(controller.fetchedObjects.map(\.objectID) == fresh.fetchedObjects.map(\.objectID))
        #expect(controller.sections.map(\.name) == fresh.sections.map(\.name))
        #expect(controller.sections.map(\.numberOfObjects) == fresh.sections.map(\.numberOfObjects))
        for batch in delegate.batches {
            #expect(batch.before.flatMap { $0 }.applying(batch.change.difference) == batch.after.flatMap { $0 })
            var expected = batch.after
            for section in batch.change.insertedSections { expected[section] = [] }
            var applied = applyAsTableView(batch.change, to: batch.before)
            for section in batch.change.insertedSections where applied != nil { applied?[section] = [] }
            #expect(applied == expected, "batch \(batch.change)")
            for change in batch.change.objectChanges where change.type == .update {
                let (from, to) = (try #require(change.indexPath), try #require(change.newIndexPath))
                #expect(batch.before[from[0]][from[1]] == batch.after[to[0]][to[1]])
            }
        }
        delegate.batches.removeAll()
    }

    @Test func fetchesSectionsIndexPathsAndIndexTitles() throws {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
        let controller = FetchedResultsController(request, context: context, sectionBy: \.title)
        controller.sectionIndexTitle = { name in name.first.map { String($0).lowercased() } }
        try controller.performFetch()
        #expect(controller.sections.map(\.name) == ["Collateral", "Heat", "Manhunter", "Ronin", "Thief"])
        #expect(controller.sectionIndexTitles == ["c", "h", "m", "r", "t"])
        #expect(controller.section(forSectionIndexTitle: "m") == 2)

        let byDecade = FetchedResultsController(
            fetchRequest: FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)]), context: context,
            sectionNameKeyPath: "year")
        try byDecade.performFetch()
        #expect(byDecade.sections.map(\.name) == ["1981", "1986", "1995", "1998", "2004"])
        #expect(byDecade.sectionIndexTitles == ["1", "2"])
        let ronin = try movie("Ronin", in: context)
        #expect(byDecade.indexPath(for: ronin) == IndexPath(item: 0, section: 3))
        #expect(byDecade.object(at: IndexPath(item: 0, section: 3)) === ronin)

        let flat = FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.descending(\.year)]), context: context)
        try flat.performFetch()
        #expect(flat.sections.count == 1)
        #expect(flat.sections[0].name == "")
        #expect(flat.fetchedObjects.map(\.title) == ["Collateral", "Ronin", "Heat", "Manhunter", "Thief"])
        #expect(flat.indexPath(for: ronin) == IndexPath(item: 1, section: 0))
    }

    @Test func aSectionKeyThatIsNotTheFirstSortKeyIsSortedFirst() throws {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.descending(\.title)]), context: context, sectionBy: \.year)
        try controller.performFetch()
        #expect(controller.fetchRequest.sortDescriptors.map(\.descriptor.key) == ["year", "title"])
        #expect(controller.sections.map(\.name) == ["1981", "1986", "1995", "1998", "2004"])
    }

    @Test func anUnknownSectionKeyThrows() {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Movie>(), context: context, sectionNameKeyPath: "yeer")
        #expect(throws: StrataError.self) { try controller.performFetch() }
    }

    @Test func sectionsAppearAndDisappearInTableViewOrder() throws {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.year), .ascending(\.title)]), context: context,
            sectionBy: \.year)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()

        // Manhunter (1986) moves into a new section 1990; Thief (1981) leaves, emptying 1981.
        try movie("Manhunter", in: context).year = 1990
        context.delete(try movie("Thief", in: context))
        _ = Movie(title: "Alien", year: 1979, in: context)
        try context.save()
        #expect(
            delegate.calls == [
                "will",
                "section delete 1 1986", "section delete 0 1981",
                "section insert 0 1979", "section insert 1 1990",
                "did",
            ])
        #expect(titles(controller) == [["Alien"], ["Manhunter"], ["Heat"], ["Ronin"], ["Collateral"]])
        try verify(controller, delegate, in: context)
    }

    @Test func sortKeyEditsMoveObjectsAndOtherEditsUpdateThem() throws {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        #expect(titles(controller) == [["Collateral", "Heat", "Manhunter", "Ronin", "Thief"]])

        try movie("Collateral", in: context).title = "Zodiac"
        try movie("Heat", in: context).rating = 5
        try context.save()
        #expect(delegate.calls == ["will", "move Zodiac 0.0>0.4", "update Heat 0.1>0.0", "did"])
        let change = try #require(delegate.batches.first?.change)
        #expect(change.movedIndexPaths.map { [$0.from, $0.to] } == [[IndexPath(item: 0, section: 0), IndexPath(item: 4, section: 0)]])
        #expect(change.updatedIndexPaths == [IndexPath(item: 1, section: 0)])
        #expect(change.difference.count == 2)
        try verify(controller, delegate, in: context)

        // Swapping two neighbours by their keys is one move, not two.
        try movie("Heat", in: context).title = "Ronin II"
        try context.save()
        #expect(titles(controller) == [["Manhunter", "Ronin", "Ronin II", "Thief", "Zodiac"]])
        #expect(delegate.batches.first?.change.objectChanges.map(\.type) == [.move])
        try verify(controller, delegate, in: context)
    }

    @Test func insertsAndDeletesFollowThePredicate() throws {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
        let controller = FetchedResultsController(request, context: context)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        #expect(titles(controller) == [["Collateral", "Heat", "Ronin"]])

        try movie("Thief", in: context).year = 1999  // now matches
        try movie("Heat", in: context).year = 1980  // no longer does
        _ = Movie(title: "Alien", year: 1979, in: context)  // never does
        _ = Movie(title: "Memento", year: 2000, in: context)
        context.processPendingChanges()  // unsaved changes count too
        #expect(delegate.calls == ["will", "delete Heat 0.1>-", "insert Memento ->0.1", "insert Thief ->0.3", "did"])
        #expect(titles(controller) == [["Collateral", "Memento", "Ronin", "Thief"]])
        try verify(controller, delegate, in: context)

        // Saving gives the new objects permanent IDs; nothing moves.
        delegate.calls.removeAll()
        try context.save()
        #expect(delegate.calls.isEmpty)
        #expect(controller.fetchedObjects.allSatisfy { !$0.objectID.isTemporaryID })
        try verify(controller, delegate, in: context)
    }

    @Test func followsMergedSavesOfOtherContexts() async throws {
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)]), context: context, sectionBy: \.year)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()

        try await container.performBackgroundTask { other in
            _ = Movie(title: "Alien", year: 1979, in: other)
            try #require(try other.fetch(Movie.self, where: \.title == "Ronin").first).year = 1981
            other.delete(try #require(try other.fetch(Movie.self, where: \.title == "Collateral").first))
            try other.save()
        }
        context.processPendingChanges()  // a background context merges when it next works
        #expect(
            delegate.calls == [
                "will", "section delete 4 2004", "section delete 3 1998", "section insert 0 1979",
                "insert Ronin ->1.0", "did",  // its old section is gone: an insertion, not a move
            ])
        #expect(titles(controller) == [["Alien"], ["Ronin", "Thief"], ["Manhunter"], ["Heat"]])
        try verify(controller, delegate, in: context)

        // An explicit merge works the same way, for objects this context never loaded.
        let manual = container.newBackgroundContext()
        let flat = FetchedResultsController(FetchRequest<Movie>(predicate: \.rating >= 4, sortDescriptors: [.ascending(\.title)]), context: manual)
        try flat.performFetch()
        #expect(flat.fetchedObjects.isEmpty)
        var saves = container.savedChanges().makeAsyncIterator()
        try await container.performBackgroundTask { other in
            try #require(try other.fetch(Movie.self, where: \.title == "Heat").first).rating = 5
            try other.save()
        }
        manual.mergeChanges(from: try #require(await saves.next()))
        #expect(flat.fetchedObjects.map(\.title) == ["Heat"])
    }

    @MainActor @Test func theViewContextFollowsOtherSavesWithoutBeingAsked() async throws {
        let context = container.viewContext
        context.automaticallyMergesChangesFromContainer = true
        let controller = FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        try controller.performFetch()
        var changes = controller.changes.makeAsyncIterator()
        try await container.performBackgroundTask { other in
            _ = Movie(title: "Alien", year: 1979, in: other)
            try other.save()
        }
        let change = try #require(await changes.next())
        #expect(change.insertedIndexPaths == [IndexPath(item: 0, section: 0)])
        #expect(controller.fetchedObjects.first?.title == "Alien")
    }

    @Test func aLimitedRequestIsFetchedAgain() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)])
        request.fetchLimit = 3
        let controller = FetchedResultsController(request, context: context)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        #expect(controller.fetchedObjects.map(\.title) == ["Thief", "Manhunter", "Heat"])
        _ = Movie(title: "Alien", year: 1979, in: context)
        try movie("Heat", in: context).rating = 4
        try context.save()
        #expect(controller.fetchedObjects.map(\.title) == ["Alien", "Thief", "Manhunter"])
        #expect(delegate.calls == ["will", "delete Heat 0.2>-", "insert Alien ->0.0", "did"])
        try verify(controller, delegate, in: context)
    }

    @Test func manyChangesAtOnceTakeTheMergingPath() throws {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context, sectionBy: \.year)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        for index in 0..<150 { _ = Movie(title: "Film \(index)", year: Int16(1980 + index % 30), in: context) }
        try movie("Heat", in: context).year = 1999
        try context.save()
        #expect(controller.fetchedObjects.count == 155)
        try verify(controller, delegate, in: context)
    }

    @Test(arguments: [1, 2, 3, 4])
    func randomEditsKeepTheControllerEqualToAFetch(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let request = FetchRequest<Movie>(predicate: \.rating >= 1, sortDescriptors: [.ascending(\.rating), .descending(\.title)])
        let controller = FetchedResultsController(
            fetchRequest: request, context: context, sectionNameKeyPath: seed % 2 == 0 ? "year" : nil)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        var counter = 0
        for round in 0..<40 {
            let edits = Int.random(in: 1...6, using: &random)
            let elsewhere = round % 5 == 4
            let target = elsewhere ? container.newBackgroundContext() : context
            let all = try target.fetch(Movie.self)
            for _ in 0..<edits {
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1:
                    counter += 1
                    let movie = Movie(title: "M\(counter)", year: Int16(Int.random(in: 1990...1994, using: &random)), in: target)
                    movie.rating = Double(Int.random(in: 0...3, using: &random))
                case 2:
                    if let victim = all.randomElement(using: &random), !victim.isDeleted { target.delete(victim) }
                case 3:
                    if let movie = all.randomElement(using: &random), !movie.isDeleted {
                        movie.rating = Double(Int.random(in: 0...3, using: &random))
                    }
                default:
                    if let movie = all.randomElement(using: &random), !movie.isDeleted {
                        movie.year = Int16(Int.random(in: 1990...1994, using: &random))
                        counter += 1
                        movie.title = "T\(counter)"
                    }
                }
            }
            if elsewhere || Bool.random(using: &random) { try target.save() } else { target.processPendingChanges() }
            if elsewhere { context.processPendingChanges() }
            try verify(controller, delegate, in: context)
        }
    }

    @Test func childContextsSavesReachControllersOfBothContexts() throws {
        let parent = container.newBackgroundContext()
        let parentController = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)]), context: parent)
        try parentController.performFetch()
        let child = ObjectContext(parent: parent)
        let childController = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)]), context: child)
        let delegate = RecordingDelegate()
        childController.delegate = delegate
        try childController.performFetch()

        // Two new movies with the same year: ties keep their insertion order, before and after
        // the child's save (which leaves them with temporary IDs).
        _ = Movie(title: "Alien", year: 1979, in: child)
        _ = Movie(title: "Apocalypse Now", year: 1979, in: child)
        child.processPendingChanges()
        #expect(childController.fetchedObjects.prefix(2).map(\.title) == ["Alien", "Apocalypse Now"])
        try child.save()
        try #require(childController.fetchedObjects.first).rating = 4
        child.processPendingChanges()
        #expect(delegate.calls.suffix(3) == ["will", "update Alien 0.0>0.0", "did"])
        #expect(childController.fetchedObjects.prefix(2).map(\.title) == ["Alien", "Apocalypse Now"])

        // The parent heard of the child's save as its own unsaved changes.
        parent.processPendingChanges()
        #expect(parentController.fetchedObjects.prefix(2).map(\.title) == ["Alien", "Apocalypse Now"])
        try verify(childController, delegate, in: child)
    }

    @Test func aDelegateThatSavesDuringABatchSeesTheResultCaughtUp() throws {
        final class SavingDelegate: FetchedResultsControllerDelegate {
            var saved = false
            func controllerWillChangeContent(_ controller: FetchedResultsController<Movie>) {
                guard !saved else { return }
                saved = true
                _ = Movie(title: "Zodiac", year: 2007, in: controller.managedObjectContext)
                try? controller.managedObjectContext.save()  // a nested batch, mid-batch
            }
        }
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        let delegate = SavingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        _ = Movie(title: "Alien", year: 1979, in: context)
        try context.save()
        #expect(controller.fetchedObjects.map(\.title) == ["Alien", "Collateral", "Heat", "Manhunter", "Ronin", "Thief", "Zodiac"])
    }

    @Test func delegateAndStreamsSeeTheSameBatches() async throws {
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        var changes = controller.changes.makeAsyncIterator()
        _ = Movie(title: "Alien", year: 1979, in: context)
        try context.save()
        try movie("Alien", in: context).title = "Aliens"
        try context.save()
        #expect(await changes.next() == delegate.batches.first?.change)
        #expect(await changes.next() == delegate.batches.last?.change)
        #expect(delegate.batches.count == 2)
    }

    @Test func releasingAControllerOrEndingAnIterationLeavesNoRegistration() async throws {
        let context = container.newBackgroundContext()
        let baseline = context.observerCount
        var controller: FetchedResultsController<Movie>? = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        try controller?.performFetch()
        #expect(context.observerCount == baseline + 2)

        let stream = try #require(controller?.changes)
        let iteration = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        let second = try #require(controller?.changes)
        let cancelled = Task { for await _ in second {} }
        while controller?.registrationCount != 4 { await Task.yield() }
        cancelled.cancel()
        await cancelled.value
        #expect(controller?.registrationCount == 3)

        _ = Movie(title: "Alien", year: 1979, in: context)
        try context.save()
        controller = nil
        #expect(context.observerCount == baseline)
        #expect(await iteration.value == 1)  // the iteration ends with the controller
        _ = Movie(title: "Brazil", year: 1985, in: context)
        try context.save()  // nobody left to tell
    }

    @Test func observableResultsChangeWithTheController() throws {
        let context = container.newBackgroundContext()
        let results = try ObservableFetchedResults(
            FetchedResultsController(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context))
        #expect(results.objects.count == 5)
        let changed = LockedBox(false)
        withObservationTracking {
            _ = results.objects
        } onChange: {
            changed.withLock { $0 = true }
        }
        _ = Movie(title: "Alien", year: 1979, in: context)
        try context.save()
        #expect(changed.withLock { $0 })
        #expect(results.objects.first?.title == "Alien")
        #expect(results.sections.first?.numberOfObjects == 6)
        #expect(results.lastChange?.insertedIndexPaths == [IndexPath(item: 0, section: 0)])
    }
}
