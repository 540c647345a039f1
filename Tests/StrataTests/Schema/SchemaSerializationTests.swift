import Foundation
import Testing

@testable import Strata

/// A model that uses every attribute type, every kind of default value and every option.
private enum FullModel {
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.123_456_7)
    static let decimal = Decimal(string: "12345.6789")!
    static let json = Data(#"{"colors":["red","green"],"size":3}"#.utf8)

    static var catalog: EntityDescription {
        EntityDescription(
            name: "Catalog",
            attributes: [
                AttributeDescription(name: "name", type: .string, defaultValue: "Main"),
                AttributeDescription(name: "tags", type: .codable, defaultValue: .codable(Data("[]".utf8)), valueTypeName: "[String]"),
            ],
            relationships: [
                RelationshipDescription(
                    name: "products", destination: "Product", inverse: "catalog", isToMany: true, isOrdered: true,
                    minimumCount: 1, maximumCount: 500, deleteRule: .cascade)
            ],
            versionHashModifier: "catalog-2",
            managedObjectClassName: "CatalogObject")
    }

    static var item: EntityDescription {
        EntityDescription(
            name: "Item", isAbstract: true,
            attributes: [AttributeDescription(name: "created", type: .date, defaultValue: .date(date))])
    }

    static var product: EntityDescription {
        EntityDescription(
            name: "Product", superentity: "Item",
            attributes: [
                AttributeDescription(name: "shortCode", type: .integer16, defaultValue: -7),
                AttributeDescription(name: "stock", type: .integer32, defaultValue: .integer(Int64(Int32.max))),
                AttributeDescription(
                    name: "serial", type: .integer64, defaultValue: .integer(.min), isIndexed: true,
                    validation: ValidationRules(minimumValue: .integer(.min), maximumValue: .integer(.max))),
                AttributeDescription(
                    name: "weight", type: .double, defaultValue: .double(.pi),
                    validation: ValidationRules(minimumValue: .double(-0.0), maximumValue: .double(.greatestFiniteMagnitude))),
                AttributeDescription(name: "ratio", type: .float, defaultValue: .float(1.5e-7)),
                AttributeDescription(name: "tiny", type: .double, defaultValue: .double(.leastNonzeroMagnitude)),
                AttributeDescription(
                    name: "price", type: .decimal, defaultValue: .decimal(decimal),
                    validation: ValidationRules(minimumValue: .decimal(Decimal(string: "-0.01")!))),
                AttributeDescription(
                    name: "title", type: .string, defaultValue: "Ünïcødé \"quoted\" / slash\nnew line 🎬",
                    renamingIdentifier: "name",
                    validation: ValidationRules(minimumLength: 1, maximumLength: 80, pattern: #"^[^\t]+$"#)),
                AttributeDescription(name: "note", type: .string, isOptional: true, defaultValue: .null, isTransient: true),
                AttributeDescription(name: "empty", type: .string, defaultValue: ""),
                AttributeDescription(name: "available", type: .boolean, defaultValue: true),
                AttributeDescription(name: "discontinued", type: .boolean, defaultValue: false),
                AttributeDescription(
                    name: "released", type: .date, defaultValue: .date(Date(timeIntervalSince1970: -1.5)),
                    validation: ValidationRules(
                        minimumValue: .date(Date(timeIntervalSince1970: -86_400.25)), maximumValue: .date(date))),
                AttributeDescription(
                    name: "thumbnail", type: .binaryData, isOptional: true, defaultValue: .data(Data([0, 1, 2, 0xFE, 0xFF])),
                    allowsExternalBinaryDataStorage: true, validation: ValidationRules(maximumLength: 1_000_000)),
                AttributeDescription(name: "blank", type: .binaryData, defaultValue: .data(Data())),
                AttributeDescription(name: "identifier", type: .uuid, defaultValue: .uuid(uuid), preservesValueOnDeletion: true),
                AttributeDescription(
                    name: "homepage", type: .uri, defaultValue: .url(URL(string: "https://example.com/a%20b/c?q=1&r=%C3%A9#top")!)),
                AttributeDescription(name: "file", type: .uri, defaultValue: .url(URL(string: "file:///tmp/strata/file.txt")!)),
                AttributeDescription(name: "options", type: .codable, defaultValue: .codable(json), valueTypeName: "Options"),
            ],
            relationships: [
                RelationshipDescription(name: "catalog", destination: "Catalog", isOptional: false, deleteRule: .deny),
                RelationshipDescription(
                    name: "related", destination: "Product", inverse: "related", isToMany: true, deleteRule: .noAction,
                    renamingIdentifier: "similar"),
                RelationshipDescription(name: "cached", destination: "Catalog", isTransient: true),
            ],
            uniquenessConstraints: [["identifier"], ["catalog", "shortCode"]],
            indexes: [
                IndexDescription(name: "byPrice", elements: [.init("price", ascending: false), .init("title")])
            ],
            renamingIdentifier: "Article")
    }

    /// The entities in name order, so that the decoded schema lists them the same way.
    static var entities: [EntityDescription] { [catalog, item, product] }

    static let configurations = ["Cloud": ["Catalog", "Product"], "Local": ["Item"]]

    static func schema() throws -> Schema {
        try Schema(entities, configurations: configurations, versionIdentifier: "2024.1")
    }
}

@Suite struct SchemaSerializationTests {
    /// Decodes `data` and returns the error it must fail with.
    private func decodingError(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) -> StrataError? {
        do {
            let schema = try Schema(serializedRepresentation: data)
            Issue.record("Expected decoding to fail, got:\n\(schema)", sourceLocation: sourceLocation)
            return nil
        } catch let error as StrataError {
            return error
        } catch {
            Issue.record("Expected a StrataError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The serialized form as a JSON object, edited by `change` and encoded again.
    private func edited(_ data: Data, _ change: (inout [String: Any]) throws -> Void) throws -> Data {
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        try change(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test func modelUsesEveryAttributeType() throws {
        let schema = try FullModel.schema()
        let used = Set(schema.entities.flatMap(\.attributes).map(\.type))
        #expect(used == Set(AttributeType.allCases))
        let defaults = schema.entities.flatMap(\.declaration.attributes).map(\.defaultValue.kindName)
        #expect(
            Set(defaults) == [
                "nil", "Integer", "Double", "Float", "Decimal", "String", "Boolean", "Date", "Binary", "UUID", "URI", "Codable",
            ])
    }

    @Test func roundTripKeepsEverything() throws {
        let schema = try FullModel.schema()
        let decoded = try Schema(serializedRepresentation: schema.serializedRepresentation())

        #expect(decoded.entityDescriptions == schema.entityDescriptions)
        #expect(decoded.configurations == schema.configurations)
        #expect(decoded.versionIdentifier == "2024.1")
        #expect(decoded.versionHash == schema.versionHash)
        for entity in schema.entities {
            let other = try #require(decoded.entity(named: entity.name))
            #expect(other.versionHash == entity.versionHash)
            #expect(other.attributes == entity.attributes)
            #expect(other.relationships == entity.relationships)
            #expect(other.indexes == entity.indexes)
            #expect(other.uniquenessConstraints == entity.uniquenessConstraints)
        }
        #expect(decoded.serializedRepresentation() == schema.serializedRepresentation())
    }

    @Test func roundTripKeepsExactValues() throws {
        let decoded = try Schema(serializedRepresentation: FullModel.schema().serializedRepresentation())
        let product = try #require(decoded.entity(named: "Product"))
        func value(_ name: String) -> AttributeValue? { product.attribute(named: name)?.defaultValue }

        #expect(value("price") == .decimal(FullModel.decimal))
        if case .decimal(let price)? = value("price") {
            #expect(price.description == "12345.6789")
        } else {
            Issue.record("price is not a decimal")
        }
        if case .double(let weight)? = value("weight") {
            #expect(weight.bitPattern == Double.pi.bitPattern)
        } else {
            Issue.record("weight is not a double")
        }
        if case .double(let minimum)? = product.attribute(named: "weight")?.validation.minimumValue {
            #expect(minimum.sign == .minus && minimum.isZero)
        } else {
            Issue.record("weight's minimum is not a double")
        }
        #expect(value("tiny") == .double(.leastNonzeroMagnitude))
        #expect(value("ratio") == .float(1.5e-7))
        #expect(value("created") == .date(FullModel.date))
        if case .date(let created)? = value("created") {
            #expect(created.timeIntervalSinceReferenceDate == 700_000_000.123_456_7)
        }
        #expect(value("serial") == .integer(.min))
        #expect(value("homepage") == .url(URL(string: "https://example.com/a%20b/c?q=1&r=%C3%A9#top")!))
        #expect(value("options") == .codable(FullModel.json))
        #expect(value("thumbnail") == .data(Data([0, 1, 2, 0xFE, 0xFF])))
        #expect(value("blank") == .data(Data()))
        #expect(value("note") == .null)
        #expect(value("empty") == .string(""))
        #expect(value("discontinued") == .boolean(false))
    }

    @Test func serializingTwiceGivesTheSameBytes() throws {
        let schema = try FullModel.schema()
        #expect(schema.serializedRepresentation() == schema.serializedRepresentation())
        #expect(try FullModel.schema().serializedRepresentation() == schema.serializedRepresentation())
    }

    @Test func declarationOrderDoesNotChangeTheBytes() throws {
        let schema = try FullModel.schema()
        let shuffled = try Schema(
            [FullModel.product, FullModel.catalog, FullModel.item],
            configurations: ["Local": ["Item"], "Cloud": ["Product", "Catalog"]],
            versionIdentifier: "2024.1")
        #expect(shuffled.entities.map(\.name) == ["Product", "Catalog", "Item"])
        #expect(shuffled.serializedRepresentation() == schema.serializedRepresentation())
        #expect(shuffled.versionHash == schema.versionHash)

        // Decoding lists entities by name; each keeps its declaration.
        let decoded = try Schema(serializedRepresentation: shuffled.serializedRepresentation())
        #expect(decoded.entityDescriptions == shuffled.entityDescriptions.sorted { $0.name < $1.name })
        #expect(decoded.configurations == shuffled.configurations)
    }

    @Test func attributeOrderSurvivesTheRoundTrip() throws {
        // Attribute order sets attribute numbers, so it is kept even though it does not change the hash.
        var reordered = FullModel.product
        reordered.attributes.reverse()
        let schema = try Schema([FullModel.catalog, FullModel.item, reordered])
        let decoded = try Schema(serializedRepresentation: schema.serializedRepresentation())
        let product = try #require(decoded.entity(named: "Product"))
        #expect(product.attributes.map(\.name) == schema.entity(named: "Product")?.attributes.map(\.name))
        #expect(product.attributeNumber(named: "options") == 1)
        #expect(decoded.versionHash == (try FullModel.schema()).versionHash)
    }

    @Test func serializedFormIsSortedPrettyJSON() throws {
        let data = try FullModel.schema().serializedRepresentation()
        let text = String(decoding: data, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["format"] as? Int == Schema.serializationFormat)
        #expect(object["versionHash"] as? String == (try FullModel.schema()).versionHash)
        let names = (object["entities"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["Catalog", "Item", "Product"])
        #expect(text.contains("https://example.com/a%20b"))
        #expect(text.contains("\n"))
    }

    @Test func convertedDefaultsAreSerializedInTheirStoredForm() throws {
        let written = try Schema([
            EntityDescription(name: "Movie", attributes: [AttributeDescription(name: "rating", type: .double, defaultValue: 5)])
        ])
        let stored = try Schema([
            EntityDescription(name: "Movie", attributes: [AttributeDescription(name: "rating", type: .double, defaultValue: 5.0)])
        ])
        #expect(written.serializedRepresentation() == stored.serializedRepresentation())
    }

    // MARK: - Corrupt data

    @Test(arguments: [
        Data(),
        Data("not json".utf8),
        Data([0xFF, 0xFE, 0x00, 0x01]),
        Data("[]".utf8),
        Data(#"{"format": 1}"#.utf8),
        Data(#"{"format": "1", "versionHash": "", "entities": [], "configurations": {}}"#.utf8),
    ])
    func garbageIsACorruptSchema(_ data: Data) throws {
        let error = try #require(decodingError(data))
        #expect(error.code == .corruptSchema)
        #expect(error.message == "The data is not a serialized Strata schema.")
        #expect(error.underlyingError != nil)
    }

    @Test func tamperedVersionHashIsACorruptSchema() throws {
        let schema = try FullModel.schema()
        let forged = String(repeating: "0", count: 64)
        let data = try edited(schema.serializedRepresentation()) { $0["versionHash"] = forged }
        let error = try #require(decodingError(data))
        #expect(error.code == .corruptSchema)
        #expect(error.message.contains(forged))
        #expect(error.message.contains(schema.versionHash))
    }

    @Test func tamperedEntityIsACorruptSchema() throws {
        let schema = try FullModel.schema()
        // Change Catalog.name from String to Integer 64 without updating the recorded hash.
        let data = try edited(schema.serializedRepresentation()) { object in
            var entities = try #require(object["entities"] as? [[String: Any]])
            var attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
            #expect(attributes[0]["name"] as? String == "name")
            attributes[0]["type"] = "integer64"
            attributes[0]["defaultValue"] = ["type": "integer", "value": "1"]
            entities[0]["attributes"] = attributes
            object["entities"] = entities
        }
        let error = try #require(decodingError(data))
        #expect(error.code == .corruptSchema)
    }

    @Test func editedDefaultValueKeepsTheHash() throws {
        // Default values are not part of the hash, so a valid edit decodes.
        let schema = try FullModel.schema()
        let data = try edited(schema.serializedRepresentation()) { object in
            var entities = try #require(object["entities"] as? [[String: Any]])
            var attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
            attributes[0]["defaultValue"] = ["type": "string", "value": "Other"]
            entities[0]["attributes"] = attributes
            object["entities"] = entities
        }
        let decoded = try Schema(serializedRepresentation: data)
        #expect(decoded.entity(named: "Catalog")?.attribute(named: "name")?.defaultValue == "Other")
        #expect(decoded.versionHash == schema.versionHash)
    }

    @Test(arguments: [2, 99, 0, -1])
    func unsupportedFormatIsACorruptSchema(_ format: Int) throws {
        let data = try edited(FullModel.schema().serializedRepresentation()) { $0["format"] = format }
        let error = try #require(decodingError(data))
        #expect(error.code == .corruptSchema)
        #expect(error.message.contains("format \(format)"))
    }

    @Test func invalidModelInSerializedFormIsAnInvalidSchema() throws {
        let data = try edited(FullModel.schema().serializedRepresentation()) { object in
            var entities = try #require(object["entities"] as? [[String: Any]])
            entities.removeFirst()  // Catalog, which Product points to.
            object["entities"] = entities
        }
        let error = try #require(decodingError(data))
        #expect(error.code == .invalidSchema)
        #expect(error.details.contains { $0.code == .unknownDestination && $0.propertyName == "catalog" })
    }

    @Test(arguments: [
        #"{"type": "integer", "value": "12.5"}"#,
        #"{"type": "double", "value": "xyz"}"#,
        #"{"type": "float", "value": "1ffffffff"}"#,
        #"{"type": "decimal", "value": "twelve"}"#,
        #"{"type": "boolean", "value": "maybe"}"#,
        #"{"type": "date", "value": "-"}"#,
        #"{"type": "data", "value": "!!!"}"#,
        #"{"type": "uuid", "value": "1234"}"#,
        #"{"type": "codable", "value": "%%"}"#,
        #"{"type": "complex", "value": "1+i"}"#,
        #"{"type": "string"}"#,
    ])
    func corruptAttributeValueIsACorruptSchema(_ json: String) throws {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AttributeValue.self, from: Data(json.utf8))
        }
        let data = try edited(FullModel.schema().serializedRepresentation()) { object in
            var entities = try #require(object["entities"] as? [[String: Any]])
            var attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
            attributes[0]["defaultValue"] = try JSONSerialization.jsonObject(with: Data(json.utf8))
            entities[0]["attributes"] = attributes
            object["entities"] = entities
        }
        #expect(decodingError(data)?.code == .corruptSchema)
    }

    // MARK: - Attribute values

    @Test(arguments: [
        AttributeValue.null,
        .integer(0), .integer(.max), .integer(.min),
        .double(.pi), .double(-0.0), .double(.infinity), .double(-.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude),
        .float(.pi), .float(-.infinity), .float(.leastNormalMagnitude),
        .decimal(Decimal(string: "12345.6789")!), .decimal(Decimal(string: "-0.000000000000000000001")!),
        .decimal(Decimal(string: "79228162514264337593543950335")!), .decimal(0),
        .string(""), .string("a\"b\\c\n\u{0}é🎬"),
        .boolean(true), .boolean(false),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSince1970: 1_700_000_000.000_001)),
        .date(Date(timeIntervalSinceReferenceDate: -123_456_789.987_654_321)),
        .data(Data()), .data(Data((0...255).map { UInt8($0) })),
        .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
        .url(URL(string: "https://user@example.com:8443/p/a/t/h?query=1#frag")!),
        .url(URL(string: "mailto:someone@example.com")!),
        .codable(Data(#"{"a":[1,2.5,null,true],"b":{"c":"d"}}"#.utf8)),
    ])
    func attributeValueRoundTripsExactly(_ value: AttributeValue) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        let decoded = try JSONDecoder().decode(AttributeValue.self, from: data)
        #expect(decoded == value)
        switch (value, decoded) {
        case (.double(let a), .double(let b)): #expect(a.bitPattern == b.bitPattern)
        case (.float(let a), .float(let b)): #expect(a.bitPattern == b.bitPattern)
        case (.date(let a), .date(let b)):
            #expect(a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern)
        default: break
        }
        // Every payload is a string, so number formatting cannot change a value.
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["type"] is String)
        if !value.isNull { #expect(object["value"] is String) }
    }
}
