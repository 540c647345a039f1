import Foundation
import Testing

@testable import Strata

/// Key-value access on plain `ManagedObject` instances of a model that has no classes (see
/// ``ClasslessModel``): conversions, rejections with precise errors, and relationships.
@Suite struct ManagedObjectKeyValueTests {
    let schema: Schema

    init() throws {
        schema = try ClasslessModel.makeCatalogSchema()
    }

    func make(_ name: String) throws -> ManagedObject {
        try ClasslessModel.makeObject(name, in: schema)
    }

    // MARK: Attributes

    /// A value `setValue(_:forKey:)` accepts: what it is stored as, and what `value(forKey:)`
    /// gives back.
    struct Accepted: Sendable, CustomTestStringConvertible {
        let key: String
        let input: any Sendable
        let stored: AttributeValue
        let readsBack: @Sendable (Any?) -> Bool
        let testDescription: String

        init(
            _ key: String, _ input: any Sendable, stored: AttributeValue, _ label: String,
            readsBack: @escaping @Sendable (Any?) -> Bool
        ) {
            self.key = key
            self.input = input
            self.stored = stored
            self.readsBack = readsBack
            self.testDescription = "\(key) ← \(label)"
        }
    }

    static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
    static let uuid = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
    static let url = URL(string: "https://example.com/a/b?c=d") ?? URL(fileURLWithPath: "/")

    static let example = URL(string: "https://example.com") ?? URL(fileURLWithPath: "/")

    static func decimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
    }

    static let acceptedValues: [Accepted] = [
        Accepted("int16", Int16(-7), stored: .integer(-7), "Int16") { $0 as? Int16 == -7 },
        Accepted("int16", 300, stored: .integer(300), "Int in range") { $0 as? Int16 == 300 },
        Accepted("int16", UInt8(255), stored: .integer(255), "UInt8") { $0 as? Int16 == 255 },
        Accepted("int16", Int64(-32_768), stored: .integer(-32_768), "Int64 at the lower bound") {
            $0 as? Int16 == .min
        },
        Accepted("int32", Int32.max, stored: .integer(Int64(Int32.max)), "Int32.max") { $0 as? Int32 == .max },
        Accepted("int32", AttributeValue.integer(5), stored: .integer(5), "AttributeValue") { $0 as? Int32 == 5 },
        Accepted("int64", Int64.min, stored: .integer(.min), "Int64.min") { $0 as? Int64 == .min },
        Accepted("int64", 42, stored: .integer(42), "Int") { $0 as? Int64 == 42 },
        Accepted("int64", UInt32.max, stored: .integer(Int64(UInt32.max)), "UInt32.max") {
            $0 as? Int64 == Int64(UInt32.max)
        },
        Accepted("double", 2.5, stored: .double(2.5), "Double") { $0 as? Double == 2.5 },
        Accepted("double", 3, stored: .double(3), "Int") { $0 as? Double == 3 },
        Accepted("double", Float(0.5), stored: .double(0.5), "Float") { $0 as? Double == 0.5 },
        Accepted("float", Float(1.25), stored: .float(1.25), "Float") { $0 as? Float == 1.25 },
        Accepted("float", 0.5, stored: .float(0.5), "Double") { $0 as? Float == 0.5 },
        Accepted("float", Int16(2), stored: .float(2), "Int16") { $0 as? Float == 2 },
        Accepted("decimal", decimal("1.10"), stored: .decimal(decimal("1.1")), "Decimal") {
            $0 as? Decimal == Decimal(string: "1.1")
        },
        Accepted("decimal", 7, stored: .decimal(7), "Int") { $0 as? Decimal == 7 },
        Accepted("decimal", 0.1, stored: .decimal(decimal("0.1")), "Double") {
            $0 as? Decimal == Decimal(string: "0.1")
        },
        Accepted("decimal", Float(0.25), stored: .decimal(decimal("0.25")), "Float") {
            $0 as? Decimal == Decimal(string: "0.25")
        },
        Accepted("string", "plain", stored: .string("plain"), "String") { $0 as? String == "plain" },
        Accepted("string", "a slice of text".dropFirst(2).prefix(5), stored: .string("slice"), "Substring") {
            $0 as? String == "slice"
        },
        Accepted("bool", true, stored: .boolean(true), "Bool") { $0 as? Bool == true },
        Accepted("date", date, stored: .date(date), "Date") { $0 as? Date == date },
        Accepted("data", Data([1, 2, 3]), stored: .data(Data([1, 2, 3])), "Data") { $0 as? Data == Data([1, 2, 3]) },
        Accepted("data", [UInt8]([9, 8]), stored: .data(Data([9, 8])), "[UInt8]") { $0 as? Data == Data([9, 8]) },
        Accepted("uuid", uuid, stored: .uuid(uuid), "UUID") { $0 as? UUID == uuid },
        Accepted("url", url, stored: .url(url), "URL") { $0 as? URL == url },
        Accepted("url", AttributeValue.string("https://example.com"), stored: .url(example), "AttributeValue string") {
            $0 as? URL == example
        },
        Accepted(
            "json", ["b": "x", "a": 1] as [String: any Sendable], stored: .codable(Data(#"{"a":1,"b":"x"}"#.utf8)),
            "dictionary"
        ) {
            guard let object = $0 as? [String: Any] else { return false }
            return object.count == 2 && object["a"] as? Int == 1 && object["b"] as? String == "x"
        },
        Accepted("json", ["x/y", "z"], stored: .codable(Data(#"["x/y","z"]"#.utf8)), "array") {
            $0 as? [String] == ["x/y", "z"]
        },
        Accepted(
            "json", Location(latitude: 1.5, longitude: 2),
            stored: .codable(Data(#"{"latitude":1.5,"longitude":2}"#.utf8)), "Encodable"
        ) {
            guard let object = $0 as? [String: Any] else { return false }
            return object["latitude"] as? Double == 1.5 && object["longitude"] as? Double == 2
        },
        Accepted("json", "text", stored: .codable(Data(#""text""#.utf8)), "String fragment") {
            $0 as? String == "text"
        },
    ]

    @Test(arguments: acceptedValues)
    func setValueConvertsAndValueGivesTheNaturalType(_ accepted: Accepted) throws {
        let item = try make("Item")
        try item.setValue(accepted.input, forKey: accepted.key)
        #expect(try item.attributeValue(forKey: accepted.key) == accepted.stored)
        let read = try item.value(forKey: accepted.key)
        #expect(accepted.readsBack(read), "value(forKey: \"\(accepted.key)\") gave \(String(describing: read))")
    }

    @Test(arguments: AttributeType.allCases)
    func attributesStartNilAndAcceptNil(_ type: AttributeType) throws {
        let key = ClasslessModel.attributeName(for: type)
        let item = try make("Item")
        #expect(try item.value(forKey: key) == nil)
        #expect(try item.attributeValue(forKey: key) == .null)

        let value = try #require(Self.acceptedValues.first { $0.key == key })
        try item.setValue(value.input, forKey: key)
        #expect(try item.attributeValue(forKey: key) != .null)
        try item.setValue(nil, forKey: key)
        #expect(try item.value(forKey: key) == nil)
        #expect(try item.attributeValue(forKey: key) == .null)

        try item.setValue(value.input, forKey: key)
        try item.setValue(AttributeValue.null, forKey: key)
        #expect(try item.attributeValue(forKey: key) == .null)

        try item.setValue(value.input, forKey: key)
        let missing: Int? = nil
        try item.setValue(missing as Any, forKey: key)
        #expect(try item.attributeValue(forKey: key) == .null)
    }

    /// Importers read JSON with `JSONSerialization`, whose numbers are `NSNumber`s.
    @Test func valuesDecodedByJSONSerializationAreAccepted() throws {
        let json = Data(
            #"{"int16": -12, "int32": 70000, "int64": 9223372036854775807, "double": 2.5, "float": 0.5, "decimal": 0.1, "bool": true, "string": "text", "json": {"k": [1, "a/b"]}}"#
                .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let item = try make("Item")
        for (key, value) in object {
            try item.setValue(value, forKey: key)
        }
        #expect(try item.value(forKey: "int16") as? Int16 == -12)
        #expect(try item.value(forKey: "int32") as? Int32 == 70_000)
        #expect(try item.value(forKey: "int64") as? Int64 == .max)
        #expect(try item.value(forKey: "double") as? Double == 2.5)
        #expect(try item.value(forKey: "float") as? Float == 0.5)
        #expect(try item.value(forKey: "decimal") as? Decimal == Decimal(string: "0.1"))
        #expect(try item.value(forKey: "bool") as? Bool == true)
        #expect(try item.value(forKey: "string") as? String == "text")
        #expect(try item.attributeValue(forKey: "json") == .codable(Data(#"{"k":[1,"a/b"]}"#.utf8)))

        // What `value(forKey:)` gives for a Codable attribute can be written back unchanged.
        let other = try make("Item")
        try other.setValue(try item.value(forKey: "json"), forKey: "json")
        #expect(try other.attributeValue(forKey: "json") == item.attributeValue(forKey: "json"))
    }

    @Test func jsonNumbersThatAreNoFittingIntegersAreRejected() throws {
        let json = Data(#"{"fraction": 2.5, "flag": true, "huge": 18446744073709551615, "big": 70000}"#.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let item = try make("Item")
        let fraction = try #require(throws: StrataError.self) { try item.setValue(object["fraction"], forKey: "int32") }
        #expect(fraction.code == .typeMismatch)
        let flag = try #require(throws: StrataError.self) { try item.setValue(object["flag"], forKey: "int32") }
        #expect(flag.code == .typeMismatch)
        let huge = try #require(throws: StrataError.self) { try item.setValue(object["huge"], forKey: "int64") }
        #expect(huge.code == .valueOutOfRange)
        let big = try #require(throws: StrataError.self) { try item.setValue(object["big"], forKey: "int16") }
        #expect(big.code == .valueOutOfRange)
        #expect(try item.attributeValue(forKey: "int32") == .null)
    }

    @Test func optionalWrappedValuesAreUnwrapped() throws {
        let item = try make("Item")
        let title: String? = "wrapped"
        try item.setValue(title as Any, forKey: "string")
        #expect(try item.value(forKey: "string") as? String == "wrapped")
        let count: Int?? = 12
        try item.setValue(count as Any, forKey: "int32")
        #expect(try item.value(forKey: "int32") as? Int32 == 12)
    }

    struct Rejected: Sendable, CustomTestStringConvertible {
        let key: String
        let input: any Sendable
        let typeName: String
        var testDescription: String { "\(key) ← \(typeName)" }
    }

    static let rejectedValues: [Rejected] = [
        Rejected(key: "int16", input: "ten", typeName: "String"),
        Rejected(key: "int16", input: 2.5, typeName: "Double"),
        Rejected(key: "int32", input: true, typeName: "Bool"),
        Rejected(key: "int64", input: Decimal(1), typeName: "Decimal"),
        Rejected(key: "double", input: "1.5", typeName: "String"),
        Rejected(key: "float", input: Date(), typeName: "Date"),
        Rejected(key: "decimal", input: "0.1", typeName: "String"),
        Rejected(key: "string", input: 5, typeName: "Int"),
        Rejected(key: "string", input: Data("x".utf8), typeName: "Data"),
        Rejected(key: "bool", input: 1, typeName: "Int"),
        Rejected(key: "date", input: "2020-01-01", typeName: "String"),
        Rejected(key: "data", input: "bytes", typeName: "String"),
        Rejected(key: "uuid", input: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", typeName: "String"),
        Rejected(key: "url", input: "https://example.com", typeName: "String"),
        Rejected(key: "int16", input: AttributeValue.string("7"), typeName: "AttributeValue"),
        Rejected(key: "json", input: NotEncodable(), typeName: "NotEncodable"),
    ]

    struct NotEncodable: Sendable {}

    @Test(arguments: rejectedValues)
    func setValueRejectsValuesOfTheWrongType(_ rejected: Rejected) throws {
        let item = try make("Item")
        let before = try item.attributeValue(forKey: rejected.key)
        let error = try #require(throws: StrataError.self) {
            try item.setValue(rejected.input, forKey: rejected.key)
        }
        #expect(error.code == .typeMismatch)
        #expect(error.entityName == "Item")
        #expect(error.propertyName == rejected.key)
        #expect(error.objectID == item.objectID)
        #expect(error.message.contains("Item.\(rejected.key)"), "\(error.message)")
        #expect(error.message.contains(rejected.typeName), "\(error.message)")
        #expect(try item.attributeValue(forKey: rejected.key) == before)
    }

    @Test func typeMismatchMessageNamesTheAttributeType() throws {
        let item = try make("Item")
        let error = try #require(throws: StrataError.self) { try item.setValue("ten", forKey: "int16") }
        #expect(error.message == "Item.int16 is an Integer 16 attribute; got a value of type String.")
    }

    struct OutOfRange: Sendable, CustomTestStringConvertible {
        let key: String
        let input: any Sendable
        let range: String
        var testDescription: String { "\(key) ← \(input)" }
    }

    @Test(arguments: [
        OutOfRange(key: "int16", input: 70_000, range: "-32768...32767"),
        OutOfRange(key: "int16", input: -32_769, range: "-32768...32767"),
        OutOfRange(key: "int32", input: Int64.max, range: "-2147483648...2147483647"),
        OutOfRange(key: "int32", input: UInt32.max, range: "-2147483648...2147483647"),
        OutOfRange(key: "int64", input: UInt64.max, range: "-9223372036854775808...9223372036854775807"),
        OutOfRange(key: "int16", input: AttributeValue.integer(70_000), range: "-32768...32767"),
    ])
    func setValueRejectsIntegersThatDoNotFit(_ case_: OutOfRange) throws {
        let item = try make("Item")
        try item.setValue(1, forKey: case_.key)
        let error = try #require(throws: StrataError.self) { try item.setValue(case_.input, forKey: case_.key) }
        #expect(error.code == .valueOutOfRange)
        #expect(error.entityName == "Item")
        #expect(error.propertyName == case_.key)
        #expect(error.message.contains("\(case_.input)"), "\(error.message)")
        #expect(error.message.contains(case_.range), "\(error.message)")
        #expect(try item.attributeValue(forKey: case_.key) == .integer(1))
    }

    @Test func unknownKeysThrowWithASuggestion() throws {
        let owner = try make("Owner")
        let error = try #require(throws: StrataError.self) { try owner.setValue("Ann", forKey: "nmae") }
        #expect(error.code == .unknownKey)
        #expect(error.entityName == "Owner")
        #expect(error.propertyName == "nmae")
        #expect(error.message.contains("Did you mean 'name'?"), "\(error.message)")

        let relationship = try #require(throws: StrataError.self) { try owner.value(forKey: "itemz") }
        #expect(relationship.code == .unknownKey)
        #expect(relationship.message.contains("Did you mean 'items'?"), "\(relationship.message)")

        let unrelated = try #require(throws: StrataError.self) { try owner.setValue(1, forKey: "zzzzzzzzzzzz") }
        #expect(unrelated.code == .unknownKey)
        #expect(!unrelated.message.contains("Did you mean"), "\(unrelated.message)")
    }

    @Test func attributeValueForKeyOnlyKnowsAttributes() throws {
        let owner = try make("Owner")
        let error = try #require(throws: StrataError.self) { try owner.attributeValue(forKey: "items") }
        #expect(error.code == .unknownKey)
        #expect(try owner.attributeValue(forKey: "name") == .string(""))
    }

    @Test func plainObjectsUseEntityDefaults() throws {
        let manager = try make("Manager")
        #expect(try manager.value(forKey: "name") as? String == "")
        #expect(try manager.value(forKey: "level") as? Int16 == 1)
        #expect(try manager.value(forKey: "badge") == nil)
        #expect(try manager.value(forKey: "items") as? Set<ManagedObject> == [])
        try manager.setValue("Ann", forKey: "name")
        #expect(try manager.value(forKey: "name") as? String == "Ann")
    }

    // MARK: Relationships

    @Test func toOneAcceptsTheDestinationEntityAndItsSubentities() throws {
        let item = try make("Item")
        let owner = try make("Owner")
        let manager = try make("Manager")

        try item.setValue(owner, forKey: "owner")
        #expect(try item.value(forKey: "owner") as? ManagedObject === owner)
        #expect(try owner.value(forKey: "items") as? Set<ManagedObject> == [item])

        try item.setValue(manager, forKey: "owner")
        #expect(try item.value(forKey: "owner") as? ManagedObject === manager)
        #expect(try manager.value(forKey: "items") as? Set<ManagedObject> == [item])
        #expect(try owner.value(forKey: "items") as? Set<ManagedObject> == [])

        try item.setValue(nil, forKey: "owner")
        #expect(try item.value(forKey: "owner") == nil)
        #expect(try manager.value(forKey: "items") as? Set<ManagedObject> == [])
    }

    @Test func toOneRejectsOtherEntitiesAndValues() throws {
        let item = try make("Item")
        let owner = try make("Owner")
        try item.setValue(owner, forKey: "owner")

        let part = try make("Part")
        let error = try #require(throws: StrataError.self) { try item.setValue(part, forKey: "owner") }
        #expect(error.code == .typeMismatch)
        #expect(error.entityName == "Item")
        #expect(error.propertyName == "owner")
        #expect(error.message.contains("Owner"), "\(error.message)")
        #expect(error.message.contains("a Part object"), "\(error.message)")

        let text = try #require(throws: StrataError.self) { try item.setValue("Ann", forKey: "owner") }
        #expect(text.code == .typeMismatch)
        #expect(text.message.contains("String"), "\(text.message)")

        let many = try #require(throws: StrataError.self) { try item.setValue([owner], forKey: "owner") }
        #expect(many.code == .typeMismatch)

        // Nothing changed on either side.
        #expect(try item.value(forKey: "owner") as? ManagedObject === owner)
        #expect(try part.value(forKey: "item") == nil)
    }

    @Test func toManyAcceptsArraysAndSets() throws {
        let item = try make("Item")
        let first = try make("Label")
        let second = try make("Label")
        let third = try make("Label")

        try item.setValue([first, second], forKey: "labels")
        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [first, second])

        try item.setValue(Set([second, third]), forKey: "labels")
        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [second, third])

        try item.setValue([third] as [Any], forKey: "labels")
        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [third])

        try item.setValue(nil, forKey: "labels")
        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [])
    }

    @Test func toManyRejectsWrongElementsAndNonCollections() throws {
        let item = try make("Item")
        let label = try make("Label")
        let part = try make("Part")
        try item.setValue([label], forKey: "labels")

        let wrongElement = try #require(throws: StrataError.self) {
            try item.setValue([label, part], forKey: "labels")
        }
        #expect(wrongElement.code == .typeMismatch)
        #expect(wrongElement.propertyName == "labels")
        #expect(wrongElement.message.contains("Label"), "\(wrongElement.message)")

        let single = try #require(throws: StrataError.self) { try item.setValue(label, forKey: "labels") }
        #expect(single.code == .typeMismatch)
        #expect(single.message.contains("not a collection"), "\(single.message)")

        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [label])
        #expect(try label.value(forKey: "items") as? Set<ManagedObject> == [item])
        #expect(try part.value(forKey: "item") == nil)
    }

    @Test func orderedToManyKeepsOrderAndDropsDuplicates() throws {
        let item = try make("Item")
        let parts = try (0..<4).map { index in
            let part = try make("Part")
            try part.setValue("part \(index)", forKey: "name")
            return part
        }
        try item.setValue([parts[2], parts[0], parts[3], parts[1]], forKey: "parts")
        let stored = try #require(try item.value(forKey: "parts") as? [ManagedObject])
        #expect(
            stored.map(ObjectIdentifier.init) == [parts[2], parts[0], parts[3], parts[1]].map(ObjectIdentifier.init))
        for part in parts {
            #expect(try part.value(forKey: "item") as? ManagedObject === item)
        }

        try item.setValue([parts[1], parts[1], parts[0]], forKey: "parts")
        let deduplicated = try #require(try item.value(forKey: "parts") as? [ManagedObject])
        #expect(deduplicated.map(ObjectIdentifier.init) == [parts[1], parts[0]].map(ObjectIdentifier.init))
        #expect(try parts[2].value(forKey: "item") == nil)
        #expect(try parts[3].value(forKey: "item") == nil)
    }

    @Test func settingTheToOneSideAppendsToTheOrderedInverse() throws {
        let item = try make("Item")
        let first = try make("Part")
        let second = try make("Part")
        try second.setValue(item, forKey: "item")
        try first.setValue(item, forKey: "item")
        let stored = try #require(try item.value(forKey: "parts") as? [ManagedObject])
        #expect(stored.map(ObjectIdentifier.init) == [second, first].map(ObjectIdentifier.init))
    }

    @Test func oneToManyInverseStaysInStepBothWays() throws {
        let owner = try make("Owner")
        let other = try make("Owner")
        let first = try make("Item")
        let second = try make("Item")

        try owner.setValue([first, second], forKey: "items")
        #expect(try first.value(forKey: "owner") as? ManagedObject === owner)
        #expect(try second.value(forKey: "owner") as? ManagedObject === owner)

        // Moving one item from its to-one side takes it out of the old owner's set.
        try first.setValue(other, forKey: "owner")
        #expect(try owner.value(forKey: "items") as? Set<ManagedObject> == [second])
        #expect(try other.value(forKey: "items") as? Set<ManagedObject> == [first])

        // Taking it over from the to-many side clears the previous owner's set too.
        try owner.setValue([first, second], forKey: "items")
        #expect(try other.value(forKey: "items") as? Set<ManagedObject> == [])
        #expect(try first.value(forKey: "owner") as? ManagedObject === owner)

        try owner.setValue([], forKey: "items")
        #expect(try first.value(forKey: "owner") == nil)
        #expect(try second.value(forKey: "owner") == nil)
    }

    @Test func manyToManyInverseStaysInStepBothWays() throws {
        let item = try make("Item")
        let other = try make("Item")
        let red = try make("Label")
        let blue = try make("Label")

        try item.setValue([red, blue], forKey: "labels")
        try other.setValue([red], forKey: "labels")
        #expect(try red.value(forKey: "items") as? Set<ManagedObject> == [item, other])
        #expect(try blue.value(forKey: "items") as? Set<ManagedObject> == [item])

        try red.setValue([other], forKey: "items")
        #expect(try item.value(forKey: "labels") as? Set<ManagedObject> == [blue])
        #expect(try other.value(forKey: "labels") as? Set<ManagedObject> == [red])
    }

    @Test func oneToOneInverseStaysInStepBothWays() throws {
        let ann = try make("Owner")
        let bob = try make("Manager")
        let badge = try make("Badge")

        try ann.setValue(badge, forKey: "badge")
        #expect(try badge.value(forKey: "holder") as? ManagedObject === ann)

        try bob.setValue(badge, forKey: "badge")
        #expect(try badge.value(forKey: "holder") as? ManagedObject === bob)
        #expect(try ann.value(forKey: "badge") == nil)

        try badge.setValue(ann, forKey: "holder")
        #expect(try ann.value(forKey: "badge") as? ManagedObject === badge)
        #expect(try bob.value(forKey: "badge") == nil)
    }

    // MARK: Relationships of an entity to itself

    static func makeNode(in schema: Schema) throws -> ManagedObject {
        try ClasslessModel.makeObject("Node", in: schema)
    }

    static func makeNodeSchema() throws -> Schema {
        try Schema([
            EntityDescription(
                name: "Node",
                relationships: [
                    RelationshipDescription(name: "parent", destination: "Node", inverse: "children"),
                    RelationshipDescription(
                        name: "children", destination: "Node", inverse: "parent", isToMany: true, isOrdered: true),
                    RelationshipDescription(name: "partner", destination: "Node", inverse: "partner"),
                    RelationshipDescription(name: "friends", destination: "Node", inverse: "friends", isToMany: true),
                ])
        ])
    }

    @Test func treeOfOneEntityStaysInStep() throws {
        let schema = try Self.makeNodeSchema()
        let root = try Self.makeNode(in: schema)
        let other = try Self.makeNode(in: schema)
        let leaf = try Self.makeNode(in: schema)
        try leaf.setValue(root, forKey: "parent")
        #expect((try root.value(forKey: "children") as? [ManagedObject])?.first === leaf)
        try other.setValue([leaf], forKey: "children")
        #expect(try leaf.value(forKey: "parent") as? ManagedObject === other)
        #expect((try root.value(forKey: "children") as? [ManagedObject])?.isEmpty == true)
    }

    @Test func selfInverseToOneStaysInStep() throws {
        let schema = try Self.makeNodeSchema()
        let a = try Self.makeNode(in: schema)
        let b = try Self.makeNode(in: schema)
        let c = try Self.makeNode(in: schema)
        try a.setValue(b, forKey: "partner")
        #expect(try b.value(forKey: "partner") as? ManagedObject === a)

        try a.setValue(c, forKey: "partner")
        #expect(try b.value(forKey: "partner") == nil)
        #expect(try c.value(forKey: "partner") as? ManagedObject === a)

        try b.setValue(c, forKey: "partner")
        #expect(try c.value(forKey: "partner") as? ManagedObject === b)
        #expect(try a.value(forKey: "partner") == nil)

        try a.setValue(a, forKey: "partner")
        #expect(try a.value(forKey: "partner") as? ManagedObject === a)
        try a.setValue(nil, forKey: "partner")
        #expect(try a.value(forKey: "partner") == nil)
    }

    @Test func selfInverseToManyStaysInStep() throws {
        let schema = try Self.makeNodeSchema()
        let a = try Self.makeNode(in: schema)
        let b = try Self.makeNode(in: schema)
        let c = try Self.makeNode(in: schema)
        try a.setValue([b, c], forKey: "friends")
        #expect(try b.value(forKey: "friends") as? Set<ManagedObject> == [a])
        #expect(try c.value(forKey: "friends") as? Set<ManagedObject> == [a])
        try b.setValue([c], forKey: "friends")
        #expect(try a.value(forKey: "friends") as? Set<ManagedObject> == [c])
        #expect(try c.value(forKey: "friends") as? Set<ManagedObject> == [a, b])
        try a.setValue([a], forKey: "friends")
        #expect(try a.value(forKey: "friends") as? Set<ManagedObject> == [a])
        #expect(try c.value(forKey: "friends") as? Set<ManagedObject> == [b])
    }
}
