import Foundation

extension Schema {
    /// The current version of the serialized form.
    static let serializationFormat = 1

    private struct Serialized: Codable {
        var format: Int
        var versionIdentifier: String?
        var versionHash: String
        var entities: [EntityDescription]
        var configurations: [String: [String]]
    }

    /// Encodes the schema in its stable serialized form: UTF-8 JSON with sorted keys and
    /// entities sorted by name.
    ///
    /// Stores keep this in their metadata, so that tools (the `strata` CLI) and migrations can
    /// read a store without the app's code. Decoding it with ``init(serializedRepresentation:)``
    /// gives a schema with the same ``versionHash``.
    ///
    /// - Returns: The encoded schema.
    public func serializedRepresentation() -> Data {
        let serialized = Serialized(
            format: Self.serializationFormat, versionIdentifier: versionIdentifier, versionHash: versionHash,
            entities: entityDescriptions.sorted { $0.name < $1.name }, configurations: configurations)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain structs of strings, numbers and arrays cannot fail.
        return (try? encoder.encode(serialized)) ?? Data()
    }

    /// Decodes a schema from its serialized form and validates it again.
    ///
    /// - Parameter data: Data produced by ``serializedRepresentation()``.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/corruptSchema`` when the data is
    ///   not a serialized schema, was written by a newer version of Strata, or does not match
    ///   its recorded hash; ``StrataError/Code/invalidSchema`` when it decodes to an invalid model.
    public convenience init(serializedRepresentation data: Data) throws {
        let serialized: Serialized
        do {
            serialized = try JSONDecoder().decode(Serialized.self, from: data)
        } catch {
            throw StrataError(
                .corruptSchema, "The data is not a serialized Strata schema.", underlyingError: error)
        }
        guard serialized.format <= Self.serializationFormat else {
            throw StrataError(
                .corruptSchema,
                "The schema was written in format \(serialized.format), newer than this version of Strata reads (\(Self.serializationFormat)). Update Strata.")
        }
        guard serialized.format >= 1 else {
            throw StrataError(
                .corruptSchema, "The serialized schema names format \(serialized.format), which no version of Strata writes.")
        }
        try self.init(
            serialized.entities, configurations: serialized.configurations,
            versionIdentifier: serialized.versionIdentifier)
        guard versionHash == serialized.versionHash else {
            throw StrataError(
                .corruptSchema,
                "The serialized schema records the version hash \(serialized.versionHash) but describes \(versionHash); the data was altered.")
        }
    }
}
