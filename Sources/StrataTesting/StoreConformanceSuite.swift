import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review
private typealias Person = ConformanceModel.Person
private typealias Car = ConformanceModel.Car
private typealias Bike = ConformanceModel.Bike
private typealias Location = ConformanceModel.Location
private typealias Keyword = ConformanceModel.Keyword

/// The behaviour every ``PersistentStore`` must show through containers and contexts: saving and
/// fetching every attribute type and relationship kind, updates and deletions with their delete
/// rules, all-or-nothing saves, optimistic locking, uniqueness constraints and merge policies,
/// rollback, faults, inheritance, child contexts and persistent history.
///
/// Run it against a store from your own tests, one Swift Testing case per check:
///
/// ```swift
/// import StrataTesting
/// import Testing
///
/// @Test(arguments: StoreConformanceSuite.Check.allCases)
/// func myStoreConforms(_ check: StoreConformanceSuite.Check) throws {
///     try StoreConformanceSuite { types, options in
///         try PersistentContainer(
///             name: "Conformance", entities: types,
///             storeDescriptions: [.inMemory(configuration: nil, persistentHistoryTracking: options.persistentHistoryTracking)])
///     }.run(check)
/// }
/// ```
///
/// Failures are reported with Swift Testing's `#expect`, so the suite must run inside a test.
public struct StoreConformanceSuite: Sendable {
    /// One behaviour the suite checks.
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case savedObjectsComeBackWithTheirRelationships
        case updatesAndDeletesAreSaved
        case nullifyRemovesTheDeletedObjectFromTheOtherSide
        case aFailedValidationSavesNothing
        case aStaleSaveIsAConflictAndSavesNothing
        case rollbackAndResetForgetUnsavedWork
        case faultsLoadOnFirstAccess
        case subentitiesShareTheirParentsTable
        case uniquenessConflictsAreTypedAndSaveNothing
        case relatingObjectsOfTwoContextsIsATypedErrorAtSave
        case aDeletedObjectCannotBeUsedAfterTheDeletionIsSaved
        case theErrorPolicyReportsDuplicatesWithTheirValues
        case objectTrumpTurnsADuplicateInsertIntoAnUpdate
        case overwriteReplacesTheSavedValues
        case duplicatesWithinOneSaveCollapseToOne
        case objectTrumpKeepsBothSidesChangesAndPrefersMine
        case storeTrumpKeepsBothSidesChangesAndPrefersTheStore
        case overwriteWritesMyWholeObject
        case rollbackDropsMyChanges
        case theErrorPolicyRefusesAStaleSave
        case aChildSavePushesIntoTheParentNotTheStore
        case aChildSeesItsParentsUnsavedChanges
        case discardingAChildLeavesTheParentUntouched
        case deletionsInAChildReachTheParentWithTheirRules
        case aChildValidatesBeforePushing
        case storeTrumpKeepsTheSavedObjectOnDuplicateInsert
        case rollbackKeepsTheSavedObjectOnDuplicateInsert

        case keysOfDeletedObjectsAreNeverReused
        case aSaveCanFreeAUniqueValueAndReuseIt
        case deletingAnUnloadedFaultWorks
        case missingUniqueValuesNeverConflict
        case aFailedChildSaveLeavesTheParentUntouched
        case childObjectsGetPermanentIDsWhenTheParentSaves
        case detachedObjectsAreNotSavedTwice

        case theInverseSideOfAManyToManyKeepsItsOrder
        case joinRowsGoAwayWithTheirTarget

        case upsertUpdatesTheInstanceTheContextHolds
        case rollbackOfAConflictingDeleteRevivesItsCascade
        case clearingAToOneRelationshipIsSaved

        case savesAreRecordedInHistoryWithAuthorsAndChanges
        case historyFetchesFilterByTokenDateAuthorAndContext
        case deletedObjectsLeaveTombstonesInHistory
        case aFailedSaveRecordsNoHistory
        case deletingHistoryKeepsWhatComesAfter
        case readingFromAPrunedTokenReportsItExpired
        case mergingATransactionRefreshesAndForgetsObjects
        case storesWithoutHistoryRecordNone

        case batchInsertsWriteRowsInOneTransaction
        case aBadRowFailsTheWholeBatchInsert
        case batchInsertsResolveUniquenessByMergePolicy
        case batchInsertsTakeHandlersAndValueSnapshots
        case batchUpdatesSetValuesAndRaiseVersions
        case stringsHoldingTheNullCharacterAreRefusedEverywhere
        case badBatchUpdatesAreTypedErrorsAndWriteNothing
        case batchDeletesApplyDeleteRules
        case aDenyRuleRefusesTheWholeBatchDelete
        case batchDeletesByObjectIDsMergeIntoContexts
        case batchRequestsWriteHistoryAndPostCommits

        /// The check's name, as test reports show it.
        public var testDescription: String { rawValue }
    }

    /// How a check wants its store opened.
    public struct StoreOptions: Sendable, Hashable {
        /// Whether the store records persistent history
        /// (``StoreDescription/isPersistentHistoryTrackingEnabled``).
        public var persistentHistoryTracking: Bool

        /// Options; history off by default.
        public init(persistentHistoryTracking: Bool = false) {
            self.persistentHistoryTracking = persistentHistoryTracking
        }
    }

    private let factory: @Sendable ([ManagedObject.Type], StoreOptions) throws -> PersistentContainer

    /// Creates the suite.
    ///
    /// - Parameter makeContainer: Makes a container over the given `@Entity` classes whose store
    ///   is new and empty, opened with the options; called once or more per check.
    public init(
        makeContainer: @escaping @Sendable (_ types: [ManagedObject.Type], _ options: StoreOptions) throws
            -> PersistentContainer
    ) {
        self.factory = makeContainer
    }

    func makeContainer() throws -> PersistentContainer {
        try factory(ConformanceModel.types, StoreOptions())
    }

    /// A container whose store records persistent history.
    func makeHistoryContainer() throws -> PersistentContainer {
        try factory(ConformanceModel.types, StoreOptions(persistentHistoryTracking: true))
    }

    /// Runs one check, reporting failures through Swift Testing.
    ///
    /// - Throws: Errors the check did not expect.
    public func run(_ check: Check) throws {
        switch check {
        case .savedObjectsComeBackWithTheirRelationships: try savedObjectsComeBackWithTheirRelationships()
        case .updatesAndDeletesAreSaved: try updatesAndDeletesAreSaved()
        case .clearingAToOneRelationshipIsSaved: try clearingAToOneRelationshipIsSaved()
        case .nullifyRemovesTheDeletedObjectFromTheOtherSide: try nullifyRemovesTheDeletedObjectFromTheOtherSide()
        case .aFailedValidationSavesNothing: try aFailedValidationSavesNothing()
        case .aStaleSaveIsAConflictAndSavesNothing: try aStaleSaveIsAConflictAndSavesNothing()
        case .rollbackAndResetForgetUnsavedWork: try rollbackAndResetForgetUnsavedWork()
        case .faultsLoadOnFirstAccess: try faultsLoadOnFirstAccess()
        case .subentitiesShareTheirParentsTable: try subentitiesShareTheirParentsTable()
        case .uniquenessConflictsAreTypedAndSaveNothing: try uniquenessConflictsAreTypedAndSaveNothing()
        case .relatingObjectsOfTwoContextsIsATypedErrorAtSave: try relatingObjectsOfTwoContextsIsATypedErrorAtSave()
        case .aDeletedObjectCannotBeUsedAfterTheDeletionIsSaved: try aDeletedObjectCannotBeUsedAfterTheDeletionIsSaved()
        case .theErrorPolicyReportsDuplicatesWithTheirValues: try theErrorPolicyReportsDuplicatesWithTheirValues()
        case .objectTrumpTurnsADuplicateInsertIntoAnUpdate: try objectTrumpTurnsADuplicateInsertIntoAnUpdate()
        case .overwriteReplacesTheSavedValues: try overwriteReplacesTheSavedValues()
        case .duplicatesWithinOneSaveCollapseToOne: try duplicatesWithinOneSaveCollapseToOne()
        case .objectTrumpKeepsBothSidesChangesAndPrefersMine: try objectTrumpKeepsBothSidesChangesAndPrefersMine()
        case .storeTrumpKeepsBothSidesChangesAndPrefersTheStore: try storeTrumpKeepsBothSidesChangesAndPrefersTheStore()
        case .overwriteWritesMyWholeObject: try overwriteWritesMyWholeObject()
        case .rollbackDropsMyChanges: try rollbackDropsMyChanges()
        case .theErrorPolicyRefusesAStaleSave: try theErrorPolicyRefusesAStaleSave()
        case .aChildSavePushesIntoTheParentNotTheStore: try aChildSavePushesIntoTheParentNotTheStore()
        case .aChildSeesItsParentsUnsavedChanges: try aChildSeesItsParentsUnsavedChanges()
        case .discardingAChildLeavesTheParentUntouched: try discardingAChildLeavesTheParentUntouched()
        case .deletionsInAChildReachTheParentWithTheirRules: try deletionsInAChildReachTheParentWithTheirRules()
        case .aChildValidatesBeforePushing: try aChildValidatesBeforePushing()
        case .storeTrumpKeepsTheSavedObjectOnDuplicateInsert:
            try storeWinningPoliciesKeepTheSavedObject(policy: .mergeByPropertyStoreTrump)
        case .rollbackKeepsTheSavedObjectOnDuplicateInsert:
            try storeWinningPoliciesKeepTheSavedObject(policy: .rollback)

        case .keysOfDeletedObjectsAreNeverReused: try keysOfDeletedObjectsAreNeverReused()
        case .aSaveCanFreeAUniqueValueAndReuseIt: try aSaveCanFreeAUniqueValueAndReuseIt()
        case .deletingAnUnloadedFaultWorks: try deletingAnUnloadedFaultWorks()
        case .missingUniqueValuesNeverConflict: try missingUniqueValuesNeverConflict()
        case .aFailedChildSaveLeavesTheParentUntouched: try aFailedChildSaveLeavesTheParentUntouched()
        case .childObjectsGetPermanentIDsWhenTheParentSaves: try childObjectsGetPermanentIDsWhenTheParentSaves()
        case .detachedObjectsAreNotSavedTwice: try detachedObjectsAreNotSavedTwice()
        case .theInverseSideOfAManyToManyKeepsItsOrder: try theInverseSideOfAManyToManyKeepsItsOrder()
        case .joinRowsGoAwayWithTheirTarget: try joinRowsGoAwayWithTheirTarget()
        case .upsertUpdatesTheInstanceTheContextHolds: try upsertUpdatesTheInstanceTheContextHolds()
        case .rollbackOfAConflictingDeleteRevivesItsCascade: try rollbackOfAConflictingDeleteRevivesItsCascade()

        case .savesAreRecordedInHistoryWithAuthorsAndChanges: try savesAreRecordedInHistoryWithAuthorsAndChanges()
        case .historyFetchesFilterByTokenDateAuthorAndContext: try historyFetchesFilterByTokenDateAuthorAndContext()
        case .deletedObjectsLeaveTombstonesInHistory: try deletedObjectsLeaveTombstonesInHistory()
        case .aFailedSaveRecordsNoHistory: try aFailedSaveRecordsNoHistory()
        case .deletingHistoryKeepsWhatComesAfter: try deletingHistoryKeepsWhatComesAfter()
        case .readingFromAPrunedTokenReportsItExpired: try readingFromAPrunedTokenReportsItExpired()
        case .mergingATransactionRefreshesAndForgetsObjects: try mergingATransactionRefreshesAndForgetsObjects()
        case .storesWithoutHistoryRecordNone: try storesWithoutHistoryRecordNone()

        case .batchInsertsWriteRowsInOneTransaction: try batchInsertsWriteRowsInOneTransaction()
        case .aBadRowFailsTheWholeBatchInsert: try aBadRowFailsTheWholeBatchInsert()
        case .batchInsertsResolveUniquenessByMergePolicy: try batchInsertsResolveUniquenessByMergePolicy()
        case .batchInsertsTakeHandlersAndValueSnapshots: try batchInsertsTakeHandlersAndValueSnapshots()
        case .batchUpdatesSetValuesAndRaiseVersions: try batchUpdatesSetValuesAndRaiseVersions()
        case .stringsHoldingTheNullCharacterAreRefusedEverywhere: try stringsHoldingTheNullCharacterAreRefusedEverywhere()
        case .badBatchUpdatesAreTypedErrorsAndWriteNothing: try badBatchUpdatesAreTypedErrorsAndWriteNothing()
        case .batchDeletesApplyDeleteRules: try batchDeletesApplyDeleteRules()
        case .aDenyRuleRefusesTheWholeBatchDelete: try aDenyRuleRefusesTheWholeBatchDelete()
        case .batchDeletesByObjectIDsMergeIntoContexts: try batchDeletesByObjectIDsMergeIntoContexts()
        case .batchRequestsWriteHistoryAndPostCommits: try batchRequestsWriteHistoryAndPostCommits()
        }
    }
}

extension StoreConformanceSuite {
    fileprivate func savedObjectsComeBackWithTheirRelationships() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.year = 1995
        movie.boxOffice = Decimal(string: "187436818.25")!
        movie.tags = ["crime"]
        movie.location = Location(latitude: 34.05, longitude: -118.24)
        let director = Person(context: context)
        director.name = "Michael Mann"
        movie.director = director
        let actors = (0..<3).map { index -> Person in
            let person = Person(context: context)
            person.name = "Actor \(index)"
            return person
        }
        movie.cast = [actors[2], actors[0], actors[1]]
        for stars in [5, 4] as [Int32] {
            let review = Review(context: context)
            review.stars = stars
            review.movie = movie
        }
        #expect(movie.objectID.isTemporaryID)
        try context.save()
        #expect(!movie.objectID.isTemporaryID)
        #expect(!context.hasChanges)
        #expect(!movie.isInserted)

        let other = container.newBackgroundContext()
        let movies = try other.fetch(Movie.self)
        #expect(movies.count == 1)
        let loaded = try #require(movies.first)
        #expect(loaded !== movie)
        #expect(loaded.objectID == movie.objectID)
        #expect(loaded.title == "Heat")
        #expect(loaded.year == 1995)
        #expect(loaded.boxOffice == Decimal(string: "187436818.25")!)
        #expect(loaded.tags == ["crime"])
        #expect(loaded.location == Location(latitude: 34.05, longitude: -118.24))
        #expect(loaded.id == movie.id)
        #expect(loaded.director?.name == "Michael Mann")
        #expect(loaded.cast.map(\.name) == ["Actor 2", "Actor 0", "Actor 1"])
        #expect(Set(loaded.reviews.map(\.stars)) == [5, 4])
        #expect(loaded.director?.directed == [loaded])
        // One instance per object ID.
        #expect(try other.fetch(Movie.self).first === loaded)
        #expect(try other.count(for: Person.self) == 4)
    }

    fileprivate func updatesAndDeletesAreSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        try context.save()

        movie.title = "Heat (1995)"
        #expect(movie.isUpdated)
        #expect(context.updatedObjects == [movie])
        try context.save()
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat (1995)"])

        // Movie.reviews cascades.
        context.delete(movie)
        #expect(review.isDeleted)
        try context.save()
        let fresh = container.newBackgroundContext()
        #expect(try fresh.count(for: Movie.self) == 0)
        #expect(try fresh.count(for: Review.self) == 0)
        #expect(throws: StrataError.self) { try fresh.existingObject(with: movie.objectID) }
    }

    fileprivate func clearingAToOneRelationshipIsSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let director = Person(context: context)
        director.name = "Mann"
        movie.director = director
        try context.save()

        movie.director = nil
        #expect(director.directed.isEmpty)
        try context.save()
        let fresh = container.newBackgroundContext()
        let saved = try #require(try fresh.fetch(Movie.self).first)
        #expect(saved.director == nil)
        #expect(try #require(try fresh.fetch(Person.self).first).directed.isEmpty)
    }

    fileprivate func nullifyRemovesTheDeletedObjectFromTheOtherSide() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        try context.save()
        context.delete(review)
        #expect(movie.reviews.isEmpty)
        try context.save()
        let loaded = try #require(try container.newBackgroundContext().fetch(Movie.self).first)
        #expect(loaded.reviews.isEmpty)
    }

    fileprivate func aFailedValidationSavesNothing() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let good = Movie(context: context)
        good.title = "Heat"
        let bad = Movie(context: context)
        bad.title = ""
        bad.year = 1200
        do {
            try context.save()
            Issue.record("an invalid movie was saved")
        } catch let error as StrataError {
            #expect(error.code == .validationFailed)
            #expect(Set(error.details.map(\.code)) == [.valueTooSmall])
            #expect(error.details.count == 2)
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 0)
        #expect(good.objectID.isTemporaryID)
        bad.title = "Fixed"
        bad.year = 1999
        try context.save()
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 2)
    }

    fileprivate func aStaleSaveIsAConflictAndSavesNothing() throws {
        let container = try makeContainer()
        let first = container.newBackgroundContext()
        let movie = Movie(context: first)
        movie.title = "Heat"
        try first.save()
        let second = container.newBackgroundContext()
        let copy = try #require(try second.existingObject(with: movie.objectID) as? Movie)
        copy.title = "Changed elsewhere"
        try second.save()
        movie.title = "Changed here"
        movie.rating = 9
        do {
            try first.save()
            Issue.record("a stale change overwrote a newer one")
        } catch let error as StrataError {
            #expect(error.code == .optimisticLockingFailure)
            #expect(error.objectID == movie.objectID)
        }
        #expect(movie.title == "Changed here")
        first.refresh(movie, mergeChanges: true)
        try first.save()
        let stored = try #require(try container.newBackgroundContext().fetch(Movie.self).first)
        #expect(stored.title == "Changed here")
        #expect(stored.rating == 9)
    }

    fileprivate func rollbackAndResetForgetUnsavedWork() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        movie.title = "Changed"
        let extra = Movie(context: context)
        context.rollback()
        #expect(movie.title == "Heat")
        #expect(extra.context == nil)
        #expect(!context.hasChanges)
        #expect(try context.fetch(Movie.self) == [movie])
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        let again = try #require(try context.fetch(Movie.self).first)
        #expect(again !== movie)
        #expect(again.title == "Heat")
    }

    fileprivate func faultsLoadOnFirstAccess() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        let other = container.newBackgroundContext()
        let fault = try #require(try other.object(with: movie.objectID) as? Movie)
        #expect(fault.isFault)
        #expect(fault.title == "Heat")
        #expect(!fault.isFault)
        context.delete(movie)
        try context.save()
        let third = container.newBackgroundContext()
        let gone = try #require(try third.object(with: movie.objectID) as? Movie)
        #expect(gone.title == "")
        #expect(gone.faultingError?.code == .objectNotFound)
    }

    fileprivate func subentitiesShareTheirParentsTable() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let car = Car(context: context)
        car.maker = "Volvo"
        car.seats = 7
        let bike = Bike(context: context)
        bike.isElectric = true
        try context.save()
        let other = container.newBackgroundContext()
        let vehicles = try other.fetch(entityName: "Vehicle")
        #expect(vehicles.count == 2)
        #expect(try other.fetch(Car.self).map(\.seats) == [7])
        #expect(try other.fetch(Bike.self).map(\.isElectric) == [true])
        #expect(try other.count(entityName: "Vehicle") == 2)
    }

    fileprivate func uniquenessConflictsAreTypedAndSaveNothing() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let first = Movie(context: context)
        first.title = "Heat"
        let second = Movie(context: context)
        second.title = "Other"
        second.id = first.id
        do {
            try context.save()
            Issue.record("two movies with one id were saved")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 0)
    }

    fileprivate func relatingObjectsOfTwoContextsIsATypedErrorAtSave() throws {
        let container = try makeContainer()
        let first = container.newBackgroundContext()
        let movie = Movie(context: first)
        movie.title = "Heat"
        try first.save()
        let second = container.newBackgroundContext()
        let review = Review(context: second)
        review.movie = movie
        do {
            try second.save()
            Issue.record("a relationship across contexts was saved")
        } catch let error as StrataError {
            #expect(error.code == .validationFailed)
            #expect(error.details.map(\.code) == [.wrongContext])
        }
        #expect(try container.newBackgroundContext().count(for: Review.self) == 0)
    }

    fileprivate func aDeletedObjectCannotBeUsedAfterTheDeletionIsSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        context.delete(movie)
        try context.save()
        #expect(movie.context == nil)
        do {
            try movie.setValue("Ronin", forKey: "title")
            Issue.record("a deleted object was changed")
        } catch let error as StrataError {
            #expect(error.code == .objectDeleted)
        }
        #expect(throws: StrataError.self) { try movie.value(forKey: "title") }
        let review = Review(context: context)
        review.movie = movie
        do {
            try context.save()
            Issue.record("a relationship to a deleted object was saved")
        } catch let error as StrataError {
            #expect(error.details.map(\.code) == [.objectDeleted])
        }
    }

    /// A container holding one saved movie (title "Heat", rating 7) and the movie's unique id.
    fileprivate func containerWithMovie() throws -> (PersistentContainer, UUID, ObjectID) {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.rating = 7
        try context.save()
        return (container, movie.id, movie.objectID)
    }

    fileprivate func storedMovies(_ container: PersistentContainer) throws -> [(title: String, rating: Double)] {
        try container.newBackgroundContext().fetch(Movie.self).map { ($0.title, $0.rating) }
    }

    fileprivate func theErrorPolicyReportsDuplicatesWithTheirValues() throws {
        let (container, id, savedID) = try containerWithMovie()
        let context = container.newBackgroundContext()
        let duplicate = Movie(context: context)
        duplicate.id = id
        duplicate.title = "Heat again"
        do {
            try context.save()
            Issue.record("a duplicate id was saved")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
            let detail = try #require(error.details.first)
            #expect(detail.entityName == "Movie")
            #expect(detail.propertyName == "id")
            #expect(detail.message.contains(id.uuidString))
            #expect(detail.message.contains(savedID.description))
            #expect(detail.objectID == duplicate.objectID)
        }
        #expect(try storedMovies(container).map(\.title) == ["Heat"])
    }

    /// Saves a new movie whose unique id is `id`'s, with `policy`; returns the new movie.
    fileprivate func saveDuplicate(
        of id: UUID, titled title: String, in container: PersistentContainer, policy: MergePolicy
    )
        throws -> Movie
    {
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        let duplicate = Movie(context: context)
        duplicate.id = id
        duplicate.title = title
        try context.save()
        return duplicate
    }

    fileprivate func objectTrumpTurnsADuplicateInsertIntoAnUpdate() throws {
        let (container, id, savedID) = try containerWithMovie()
        let upsert = try saveDuplicate(
            of: id, titled: "Heat (Director's Cut)", in: container, policy: .mergeByPropertyObjectTrump)
        #expect(upsert.objectID == savedID)
        // The save made what it wrote the object's committed state, as for any update.
        #expect(!upsert.hasChanges)
        #expect(upsert.changedValues().isEmpty)
        #expect(upsert.context?.hasChanges == false)
        let stored = try storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Heat (Director's Cut)")
        #expect(stored.first?.rating == 7)  // not set on the new object: the stored value stays
    }

    fileprivate func storeWinningPoliciesKeepTheSavedObject(policy: MergePolicy) throws {
        let (container, id, savedID) = try containerWithMovie()
        let duplicate = try saveDuplicate(of: id, titled: "Ignored", in: container, policy: policy)
        #expect(duplicate.objectID == savedID)
        #expect(duplicate.title == "Heat")
        #expect(try storedMovies(container).map(\.title) == ["Heat"])
    }

    fileprivate func overwriteReplacesTheSavedValues() throws {
        let (container, id, _) = try containerWithMovie()
        _ = try saveDuplicate(of: id, titled: "Replacement", in: container, policy: .overwrite)
        let stored = try storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Replacement")
        #expect(stored.first?.rating == 0)
    }

    fileprivate func duplicatesWithinOneSaveCollapseToOne() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let id = UUID()
        for title in ["First", "Second", "Third"] {
            let movie = Movie(context: context)
            movie.id = id
            movie.title = title
        }
        try context.save()
        #expect(try storedMovies(container).map(\.title) == ["Third"])
    }

    /// Context A loaded the movie; context B then changed its title and saved; A changes the rating
    /// (and, when `alsoTitle`, the title) and saves with `policy`.
    fileprivate func concurrentEdit(_ policy: MergePolicy, alsoTitle: Bool) throws -> (title: String, rating: Double) {
        let (container, _, savedID) = try containerWithMovie()
        let a = container.newBackgroundContext()
        a.mergePolicy = policy
        let mine = try #require(try a.existingObject(with: savedID) as? Movie)
        let b = container.newBackgroundContext()
        let theirs = try #require(try b.existingObject(with: savedID) as? Movie)
        theirs.title = "Title from B"
        try b.save()
        mine.rating = 9
        if alsoTitle { mine.title = "Title from A" }
        try a.save()
        return try #require(try storedMovies(container).first)
    }

    fileprivate func objectTrumpKeepsBothSidesChangesAndPrefersMine() throws {
        #expect(try concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: false) == ("Title from B", 9))
        #expect(try concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: true) == ("Title from A", 9))
    }

    fileprivate func storeTrumpKeepsBothSidesChangesAndPrefersTheStore() throws {
        #expect(try concurrentEdit(.mergeByPropertyStoreTrump, alsoTitle: true) == ("Title from B", 9))
    }

    fileprivate func overwriteWritesMyWholeObject() throws {
        #expect(try concurrentEdit(.overwrite, alsoTitle: false) == ("Heat", 9))
    }

    fileprivate func rollbackDropsMyChanges() throws {
        #expect(try concurrentEdit(.rollback, alsoTitle: true) == ("Title from B", 7))
    }

    fileprivate func theErrorPolicyRefusesAStaleSave() throws {
        #expect(throws: StrataError.self) { try concurrentEdit(.error, alsoTitle: false) }
    }

    fileprivate func aChildSavePushesIntoTheParentNotTheStore() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()

        let child = ObjectContext(parent: parent)
        let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
        #expect(draft !== movie)
        draft.title = "Heat (1995)"
        let review = Review(context: child)
        review.stars = 5
        review.movie = draft
        try child.save()
        #expect(!child.hasChanges)

        #expect(parent.hasChanges)
        #expect(movie.title == "Heat (1995)")
        #expect(movie.reviews.map(\.stars) == [5])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])

        try parent.save()
        let reader = container.newBackgroundContext()
        let stored = try #require(try reader.fetch(Movie.self).first)
        #expect(stored.title == "Heat (1995)")
        #expect(stored.reviews.map(\.stars) == [5])
    }

    fileprivate func aChildSeesItsParentsUnsavedChanges() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let saved = Movie(context: parent)
        saved.title = "Saved"
        try parent.save()
        saved.title = "Saved, then edited"
        let unsaved = Movie(context: parent)
        unsaved.title = "Unsaved"

        let child = ObjectContext(parent: parent)
        let titles = try child.fetch(Movie.self).map(\.title)
        #expect(titles == ["Saved, then edited", "Unsaved"])
        #expect(try child.count(for: Movie.self) == 2)
        let copy = try #require(try child.existingObject(with: unsaved.objectID) as? Movie)
        #expect(copy.title == "Unsaved")
    }

    fileprivate func discardingAChildLeavesTheParentUntouched() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()
        do {
            let child = ObjectContext(parent: parent)
            let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
            draft.title = "Scratch"
            _ = Movie(context: child)
        }
        #expect(!parent.hasChanges)
        #expect(movie.title == "Heat")
    }

    fileprivate func deletionsInAChildReachTheParentWithTheirRules() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        let review = Review(context: parent)
        review.movie = movie
        try parent.save()
        let child = ObjectContext(parent: parent)
        child.delete(try child.existingObject(with: movie.objectID))
        try child.save()
        #expect(movie.isDeleted)
        #expect(review.isDeleted)
        try parent.save()
        #expect(try container.newBackgroundContext().count(for: Review.self) == 0)
    }

    fileprivate func aChildValidatesBeforePushing() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        let movie = Movie(context: child)
        movie.title = ""
        #expect(throws: StrataError.self) { try child.save() }
        #expect(!parent.hasChanges)
    }

    fileprivate func keysOfDeletedObjectsAreNeverReused() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let first = Movie(context: context)
        first.title = "First"
        let last = Movie(context: context)
        last.title = "Last"
        try context.save()
        let oldID = last.objectID
        context.delete(last)
        try context.save()
        let next = Movie(context: context)
        next.title = "Next"
        try context.save()
        #expect(next.objectID != oldID)
        let reader = container.newBackgroundContext()
        #expect(throws: StrataError.self) { try reader.existingObject(with: oldID) }
    }

    fileprivate func aSaveCanFreeAUniqueValueAndReuseIt() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let old = Movie(context: context)
        old.title = "Old"
        try context.save()
        let id = old.id
        context.delete(old)
        let replacement = Movie(context: context)
        replacement.title = "Replacement"
        replacement.id = id
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Replacement"])
    }

    fileprivate func deletingAnUnloadedFaultWorks() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let person = Person(context: context)
        person.name = "Someone"
        try context.save()
        let other = container.newBackgroundContext()
        let fault = try other.object(with: person.objectID)
        other.delete(fault)
        try other.save()
        #expect(try container.newBackgroundContext().count(for: Person.self) == 0)
    }

    fileprivate func missingUniqueValuesNeverConflict() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let alice = Person(context: context)
        alice.name = "Alice"
        try context.save()
        for name in ["Bob", "Carol"] {
            let person = Person(context: context)
            person.name = name
        }
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Person.self).map(\.name).sorted() == ["Alice", "Bob", "Carol"])
    }

    fileprivate func aFailedChildSaveLeavesTheParentUntouched() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()
        let child = ObjectContext(parent: parent)
        let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
        draft.title = "Edited in the child"
        let review = Review(context: child)
        review.movie = draft
        parent.delete(movie)
        #expect(throws: StrataError.self) { try child.save() }
        #expect(parent.insertedObjects.isEmpty)
        #expect(parent.deletedObjects == [movie])
    }

    fileprivate func childObjectsGetPermanentIDsWhenTheParentSaves() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        let movie = Movie(context: child)
        movie.title = "Heat"
        try child.save()
        try parent.save()
        #expect(!movie.objectID.isTemporaryID)
        #expect(try child.fetch(Movie.self).first === movie)
        movie.title = "Heat (1995)"
        try child.save()
        try parent.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Heat (1995)"])
    }

    fileprivate func detachedObjectsAreNotSavedTwice() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        context.reset()
        let review = Review(context: context)
        review.movie = movie
        do {
            try context.save()
            Issue.record("a relationship to a detached object was saved")
        } catch let error as StrataError {
            #expect(error.details.map(\.code) == [.wrongContext])
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 1)
    }

    fileprivate func theInverseSideOfAManyToManyKeepsItsOrder() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movies = ["One", "Two", "Three"].map { title -> Movie in
            let movie = Movie(context: context)
            movie.title = title
            return movie
        }
        let fan = Person(context: context)
        fan.name = "Fan"
        fan.favorites = [movies[2], movies[0], movies[1]]
        try context.save()
        let reader = container.newBackgroundContext()
        let loaded = try #require(try reader.fetch(Person.self).first)
        #expect(loaded.favorites.map(\.title) == ["Three", "One", "Two"])
        #expect(loaded.favorites.first?.fans == [loaded])
        fan.favorites = [movies[1], movies[2], movies[0]]
        try context.save()
        let again = container.newBackgroundContext()
        #expect(try again.fetch(Person.self).first?.favorites.map(\.title) == ["Two", "Three", "One"])
    }

    fileprivate func joinRowsGoAwayWithTheirTarget() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let keyword = Keyword(context: context)
        keyword.word = "heist"
        movie.keywords = [keyword]
        try context.save()
        #expect(try container.newBackgroundContext().fetch(Movie.self).first?.keywords.map(\.word) == ["heist"])
        context.delete(keyword)
        try context.save()
        let unrelated = Keyword(context: context)
        unrelated.word = "unrelated"
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).first?.keywords.isEmpty == true)
    }

    fileprivate func upsertUpdatesTheInstanceTheContextHolds() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let saved = Movie(context: context)
        saved.title = "Heat"
        saved.rating = 7
        try context.save()
        let upsert = Movie(context: context)
        upsert.id = saved.id
        upsert.title = "Heat (Director's Cut)"
        let review = Review(context: context)
        review.movie = upsert
        try context.save()
        #expect(saved.title == "Heat (Director's Cut)")
        #expect(saved.rating == 7)
        #expect(saved.reviews == [review])
        #expect(review.movie === saved)
        #expect(upsert.context == nil)
        #expect(!context.hasChanges)
        let reader = container.newBackgroundContext()
        let movies = try reader.fetch(Movie.self)
        #expect(movies.map(\.title) == ["Heat (Director's Cut)"])
        #expect(movies.first?.reviews.count == 1)
    }

    fileprivate func rollbackOfAConflictingDeleteRevivesItsCascade() throws {
        let container = try makeContainer()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .rollback
        let movie = Movie(context: mine)
        movie.title = "Heat"
        let review = Review(context: mine)
        review.movie = movie
        try mine.save()
        let theirs = container.newBackgroundContext()
        let copy = try #require(try theirs.existingObject(with: movie.objectID) as? Movie)
        copy.title = "Changed elsewhere"
        try theirs.save()
        mine.delete(movie)
        #expect(review.isDeleted)
        try mine.save()
        #expect(!movie.isDeleted)
        #expect(!review.isDeleted)
        #expect(movie.reviews == [review])
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Changed elsewhere"])
        #expect(try reader.count(for: Review.self) == 1)
    }
}
