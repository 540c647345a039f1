import Foundation
import Strata

/// The kinds of store every persistence test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqliteFile
    case inMemory

    var testDescription: String { rawValue }

    /// A container of this kind over `types`, in `directory` for file stores.
    func makeContainer(_ types: [ManagedObject.Type], in directory: TemporaryDirectory, name: String = "Test") throws
        -> PersistentContainer
    {
        switch self {
        case .sqliteFile:
            try PersistentContainer(name: name, entities: types, storeDescriptions: [.sqlite(directory.file("\(name).sqlite"))])
        case .inMemory:
            try PersistentContainer(name: name, entities: types, storeDescriptions: [.inMemory])
        }
    }
}

import StrataTesting
import Testing
