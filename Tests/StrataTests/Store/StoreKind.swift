import Foundation
import Strata

/// The kinds of store every persistence test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqliteFile
    case inMemory

    var testDescription: String { rawValue }

    /// A container of this kind over `types`, in `directory` for file stores.
    func makeContainer(
        _ types: [ManagedObject.Type], in directory: TemporaryDirectory, name: String = "Test",
        persistentHistoryTracking: Bool = false
    ) throws -> PersistentContainer {
        try PersistentContainer(
            name: name, entities: types, storeDescriptions: [description(in: directory, name: name, persistentHistoryTracking: persistentHistoryTracking)])
    }

    /// The description of a store of this kind.
    func description(in directory: TemporaryDirectory, name: String = "Test", persistentHistoryTracking: Bool = false)
        -> StoreDescription
    {
        switch self {
        case .sqliteFile:
            .sqlite(directory.file("\(name).sqlite"), persistentHistoryTracking: persistentHistoryTracking)
        case .inMemory:
            .inMemory(configuration: nil, persistentHistoryTracking: persistentHistoryTracking)
        }
    }
}

import StrataTesting
import Testing
