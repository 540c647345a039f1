import Foundation
import Strata
import Testing

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
