import Crypto
import Foundation

/// Computes schema and entity version hashes.
///
/// A hash covers what decides how objects are stored: names, types, optionality, transience,
/// external storage, relationship destinations, kinds and inverses, inheritance, abstractness
/// and uniqueness constraints. It leaves out what a store can change without moving data:
/// default values, validation rules, indexes and renaming identifiers. Every list is sorted
/// first, so declaration order never changes a hash.
enum VersionHasher {
    static func entityHash(
        _ entity: EntityDescription,
        superentityName: String?,
        attributes: [AttributeDescription],
        relationships: [RelationshipDescription],
        constraints: [[String]]
    ) -> String {
        var fields: [String] = [
            "entity", entity.name, "abstract=\(entity.isAbstract)", "parent=\(superentityName ?? "")",
            "modifier=\(entity.versionHashModifier ?? "")",
        ]
        for attribute in attributes.sorted(by: { $0.name < $1.name }) {
            fields.append(
                [
                    "attribute", attribute.name, attribute.type.rawValue, "optional=\(attribute.isOptional)",
                    "transient=\(attribute.isTransient)", "external=\(attribute.allowsExternalBinaryDataStorage)",
                ].map(lengthPrefixed).joined())
        }
        for relationship in relationships.sorted(by: { $0.name < $1.name }) {
            fields.append(
                [
                    "relationship", relationship.name, relationship.destinationEntityName,
                    "inverse=\(relationship.inverseName ?? "")", "toMany=\(relationship.isToMany)",
                    "ordered=\(relationship.isOrdered)", "optional=\(relationship.isOptional)",
                    "transient=\(relationship.isTransient)",
                ].map(lengthPrefixed).joined())
        }
        for constraint in constraints.map({ $0.sorted() }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            fields.append((["unique"] + constraint).map(lengthPrefixed).joined())
        }
        return sha256(fields.map(lengthPrefixed).joined())
    }

    static func schemaHash(entityHashes: [(name: String, hash: String)]) -> String {
        sha256(entityHashes.sorted { $0.name < $1.name }.map { lengthPrefixed($0.name) + $0.hash }.joined())
    }

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// "<length>:<text>", so that no two different field lists produce the same string.
    private static func lengthPrefixed(_ text: String) -> String {
        "\(text.utf8.count):\(text)"
    }
}
