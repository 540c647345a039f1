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
        // The hashed text is a list of length-prefixed fields ("<length>:<text>"); a property is
        // one field holding its own length-prefixed parts. It is built as bytes, not strings:
        // every container that opens builds the hash of every entity.
        var text = HashInput()
        text.bytes.reserveCapacity(128 * (1 + attributes.count + relationships.count + constraints.count))
        text.field("entity")
        text.field(entity.name)
        text.field(entity.isAbstract ? "abstract=true" : "abstract=false")
        text.field("parent=", superentityName ?? "")
        text.field("modifier=", entity.versionHashModifier ?? "")
        for attribute in attributes.sorted(by: { $0.name < $1.name }) {
            text.nested { parts in
                parts.field("attribute")
                parts.field(attribute.name)
                parts.field(attribute.type.rawValue)
                parts.field(attribute.isOptional ? "optional=true" : "optional=false")
                parts.field(attribute.isTransient ? "transient=true" : "transient=false")
                parts.field(attribute.allowsExternalBinaryDataStorage ? "external=true" : "external=false")
            }
        }
        for relationship in relationships.sorted(by: { $0.name < $1.name }) {
            text.nested { parts in
                parts.field("relationship")
                parts.field(relationship.name)
                parts.field(relationship.destinationEntityName)
                parts.field("inverse=", relationship.inverseName ?? "")
                parts.field(relationship.isToMany ? "toMany=true" : "toMany=false")
                parts.field(relationship.isOrdered ? "ordered=true" : "ordered=false")
                parts.field(relationship.isOptional ? "optional=true" : "optional=false")
                parts.field(relationship.isTransient ? "transient=true" : "transient=false")
            }
        }
        for constraint in constraints.map({ $0.sorted() }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            text.nested { parts in
                parts.field("unique")
                for name in constraint { parts.field(name) }
            }
        }
        return sha256(text.bytes)
    }

    static func schemaHash(entityHashes: [(name: String, hash: String)]) -> String {
        var text = HashInput()
        for (name, hash) in entityHashes.sorted(by: { $0.name < $1.name }) {
            text.field(name)
            text.bytes.append(contentsOf: hash.utf8)
        }
        return sha256(text.bytes)
    }

    static func sha256(_ text: String) -> String {
        sha256(Array(text.utf8))
    }

    private static func sha256(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: bytes) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The bytes of a hash's text: fields written as "<length>:<text>", with the length in UTF-8
    /// bytes, so that no two different field lists produce the same text.
    private struct HashInput {
        var bytes: [UInt8] = []

        /// Appends `prefix` and `text` as one field.
        mutating func field(_ prefix: String, _ text: String = "") {
            appendDecimal(prefix.utf8.count + text.utf8.count)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: prefix.utf8)
            bytes.append(contentsOf: text.utf8)
        }

        /// Appends one field whose text is the fields `build` writes.
        mutating func nested(_ build: (inout HashInput) -> Void) {
            var inner = HashInput()
            inner.bytes.reserveCapacity(128)
            build(&inner)
            appendDecimal(inner.bytes.count)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: inner.bytes)
        }

        private mutating func appendDecimal(_ value: Int) {
            var divisor = 1
            while divisor <= value / 10 { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
    }
}
