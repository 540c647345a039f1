import Foundation

/// How far an import of another program's store (a Core Data store) has come: what
/// ``CoreDataImport/importStore(at:schema:to:progress:)`` and the conversion of a Core Data
/// store in place report.
public struct StoreImportProgress: Sendable, Hashable {
    /// What the import does now.
    public enum Phase: String, Sendable, Hashable {
        /// Writing objects and their attribute values.
        case objects
        /// Connecting objects: to-one and one-to-many relationships.
        case relationships
        /// Connecting objects: many-to-many, ordered and inverse-less to-many relationships.
        case links
    }

    /// What the import does now.
    public var phase: Phase
    /// Units done: objects written, then objects connected, then links made.
    public var completedUnitCount: Int
    /// Units in all: twice the number of objects, plus the number of links; counted before
    /// the import starts, so ``fractionCompleted`` only grows.
    public var totalUnitCount: Int

    /// The fraction done, from 0 to 1.
    public var fractionCompleted: Double {
        totalUnitCount == 0 ? 1 : Double(completedUnitCount) / Double(totalUnitCount)
    }
}
