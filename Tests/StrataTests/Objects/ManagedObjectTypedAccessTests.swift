import Foundation
import Testing

@testable import Strata

/// The accessors `@Entity` generates, read back through the typed property, `value(forKey:)`
/// (natural Swift types) and `attributeValue(forKey:)` (the stored form).
@Suite struct ManagedObjectTypedAccessTests {
    enum SampleAttribute: String, CaseIterable, Sendable {
        case int16, int32, int64, int, double, float, decimal, string, bool, date, data, uuid, url, location
    }

    /// Writes a value that differs from the default through the typed setter, then reads it back
    /// three ways.
    @Test(arguments: SampleAttribute.allCases)
    func everyAttributeTypeRoundTrips(_ attribute: SampleAttribute) throws {
        let sample = Sample()
        let key = attribute.rawValue
        switch attribute {
        case .int16:
            sample.int16 = -12_345
            #expect(sample.int16 == -12_345)
            #expect(try sample.value(forKey: key) as? Int16 == -12_345)
            #expect(try sample.attributeValue(forKey: key) == .integer(-12_345))
        case .int32:
            sample.int32 = 2_000_000_000
            #expect(sample.int32 == 2_000_000_000)
            #expect(try sample.value(forKey: key) as? Int32 == 2_000_000_000)
            #expect(try sample.attributeValue(forKey: key) == .integer(2_000_000_000))
        case .int64:
            sample.int64 = 9_000_000_000_000
            #expect(sample.int64 == 9_000_000_000_000)
            #expect(try sample.value(forKey: key) as? Int64 == 9_000_000_000_000)
            #expect(try sample.attributeValue(forKey: key) == .integer(9_000_000_000_000))
        case .int:
            sample.int = -42
            #expect(sample.int == -42)
            // `Int` is stored as a 64-bit integer attribute, so dynamic access gives `Int64`.
            #expect(try sample.value(forKey: key) as? Int64 == -42)
            #expect(try sample.attributeValue(forKey: key) == .integer(-42))
            #expect(Sample.entity.attribute(named: key)?.type == .integer64)
        case .double:
            sample.double = 2.718281828459045
            #expect(sample.double == 2.718281828459045)
            #expect(try sample.value(forKey: key) as? Double == 2.718281828459045)
            #expect(try sample.attributeValue(forKey: key) == .double(2.718281828459045))
        case .float:
            sample.float = 0.1
            #expect(sample.float == Float(0.1))
            #expect(try sample.value(forKey: key) as? Float == Float(0.1))
            #expect(try sample.attributeValue(forKey: key) == .float(0.1))
        case .decimal:
            let price = try #require(Decimal(string: "1234.5678"))
            sample.decimal = price
            #expect(sample.decimal == price)
            #expect(try sample.value(forKey: key) as? Decimal == price)
            #expect(try sample.attributeValue(forKey: key) == .decimal(price))
        case .string:
            sample.string = "Ünïcødé 🎬 text"
            #expect(sample.string == "Ünïcødé 🎬 text")
            #expect(try sample.value(forKey: key) as? String == "Ünïcødé 🎬 text")
            #expect(try sample.attributeValue(forKey: key) == .string("Ünïcødé 🎬 text"))
        case .bool:
            sample.bool = true
            #expect(sample.bool)
            #expect(try sample.value(forKey: key) as? Bool == true)
            #expect(try sample.attributeValue(forKey: key) == .boolean(true))
        case .date:
            let date = Date(timeIntervalSinceReferenceDate: 123_456_789.125)
            sample.date = date
            #expect(sample.date == date)
            #expect(try sample.value(forKey: key) as? Date == date)
            #expect(try sample.attributeValue(forKey: key) == .date(date))
        case .data:
            let bytes = Data([0x00, 0xFF, 0x10, 0x80])
            sample.data = bytes
            #expect(sample.data == bytes)
            #expect(try sample.value(forKey: key) as? Data == bytes)
            #expect(try sample.attributeValue(forKey: key) == .data(bytes))
        case .uuid:
            let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            sample.uuid = uuid
            #expect(sample.uuid == uuid)
            #expect(try sample.value(forKey: key) as? UUID == uuid)
            #expect(try sample.attributeValue(forKey: key) == .uuid(uuid))
        case .url:
            let url = try #require(URL(string: "https://example.com/films?id=7#top"))
            sample.url = url
            #expect(sample.url == url)
            #expect(try sample.value(forKey: key) as? URL == url)
            #expect(try sample.attributeValue(forKey: key) == .url(url))
        case .location:
            sample.location = Location(latitude: 48.8584, longitude: -2.25)
            #expect(sample.location == Location(latitude: 48.8584, longitude: -2.25))
            let json = try #require(try sample.value(forKey: key) as? [String: Any])
            #expect(json.count == 2)
            #expect(json["latitude"] as? Double == 48.8584)
            #expect(json["longitude"] as? Double == -2.25)
            #expect(
                try sample.attributeValue(forKey: key)
                    == .codable(Data(#"{"latitude":48.8584,"longitude":-2.25}"#.utf8)))
        }
    }

    /// The same values written by key reach the typed getters.
    @Test(arguments: SampleAttribute.allCases)
    func valuesSetByKeyReadThroughTypedAccessors(_ attribute: SampleAttribute) throws {
        let sample = Sample()
        let key = attribute.rawValue
        switch attribute {
        case .int16:
            try sample.setValue(Int16.min, forKey: key)
            #expect(sample.int16 == Int16.min)
        case .int32:
            try sample.setValue(Int32.max, forKey: key)
            #expect(sample.int32 == Int32.max)
        case .int64:
            try sample.setValue(Int64.min, forKey: key)
            #expect(sample.int64 == Int64.min)
        case .int:
            try sample.setValue(Int.max, forKey: key)
            #expect(sample.int == Int.max)
        case .double:
            try sample.setValue(-0.5, forKey: key)
            #expect(sample.double == -0.5)
        case .float:
            try sample.setValue(Float(3.25), forKey: key)
            #expect(sample.float == 3.25)
        case .decimal:
            try sample.setValue(Decimal(string: "-99.99"), forKey: key)
            #expect(sample.decimal == Decimal(string: "-99.99"))
        case .string:
            try sample.setValue("keyed", forKey: key)
            #expect(sample.string == "keyed")
        case .bool:
            try sample.setValue(true, forKey: key)
            #expect(sample.bool == true)
        case .date:
            try sample.setValue(Date(timeIntervalSince1970: 86_400), forKey: key)
            #expect(sample.date == Date(timeIntervalSince1970: 86_400))
        case .data:
            try sample.setValue(Data("abc".utf8), forKey: key)
            #expect(sample.data == Data("abc".utf8))
        case .uuid:
            let uuid = UUID()
            try sample.setValue(uuid, forKey: key)
            #expect(sample.uuid == uuid)
        case .url:
            try sample.setValue(URL(fileURLWithPath: "/var/data/file.txt"), forKey: key)
            #expect(sample.url == URL(fileURLWithPath: "/var/data/file.txt"))
        case .location:
            try sample.setValue(Location(latitude: 1, longitude: 2), forKey: key)
            #expect(sample.location == Location(latitude: 1, longitude: 2))
            try sample.setValue(["latitude": 3.5, "longitude": -4.0], forKey: key)
            #expect(sample.location == Location(latitude: 3.5, longitude: -4))
        }
    }

    @Test(arguments: [Int16.min, -1, 0, 1, Int16.max])
    func int16ExtremesRoundTrip(_ number: Int16) throws {
        let sample = Sample()
        sample.int16 = number
        #expect(sample.int16 == number)
        #expect(try sample.value(forKey: "int16") as? Int16 == number)
        #expect(try sample.attributeValue(forKey: "int16") == .integer(Int64(number)))
    }

    @Test(arguments: [Int64.min, -1, 0, Int64(Int32.max) + 1, Int64.max])
    func int64ExtremesRoundTrip(_ number: Int64) throws {
        let sample = Sample()
        sample.int64 = number
        sample.int = Int(number)
        #expect(sample.int64 == number)
        #expect(sample.int == Int(number))
        #expect(try sample.value(forKey: "int64") as? Int64 == number)
        #expect(try sample.value(forKey: "int") as? Int64 == number)
    }

    // MARK: Defaults and initial values

    @Test func literalInitialValuesBecomeEntityDefaults() throws {
        let entity = Sample.entity
        #expect(entity.attribute(named: "int16")?.defaultValue == .integer(0))
        #expect(entity.attribute(named: "double")?.defaultValue == .double(0))
        #expect(entity.attribute(named: "float")?.defaultValue == .float(0))
        #expect(entity.attribute(named: "decimal")?.defaultValue == .decimal(0))
        #expect(entity.attribute(named: "string")?.defaultValue == .string(""))
        #expect(entity.attribute(named: "bool")?.defaultValue == .boolean(false))
        #expect(entity.attribute(named: "code")?.defaultValue == .string("abc"))
        #expect(Movie.entity.attribute(named: "year")?.defaultValue == .integer(1999))
        #expect(Review.entity.attribute(named: "stars")?.defaultValue == .integer(3))
        // Expressions are not literals: they are evaluated per object, not stored in the entity.
        #expect(entity.attribute(named: "date")?.defaultValue == .null)
        #expect(entity.attribute(named: "uuid")?.defaultValue == .null)
        #expect(entity.attribute(named: "location")?.defaultValue == .null)
    }

    @Test func newObjectsStartWithDeclaredValues() throws {
        let sample = Sample()
        #expect(sample.int16 == 0)
        #expect(sample.int == 0)
        #expect(sample.double == 0)
        #expect(sample.decimal == 0)
        #expect(sample.string == "")
        #expect(sample.bool == false)
        #expect(sample.code == "abc")
        #expect(sample.date == Date(timeIntervalSince1970: 0))
        #expect(sample.data == Data())
        #expect(sample.url == URL(fileURLWithPath: "/tmp"))
        #expect(sample.location == Location(latitude: 0, longitude: 0))
        #expect(try sample.attributeValue(forKey: "date") == .date(Date(timeIntervalSince1970: 0)))
        #expect(try sample.attributeValue(forKey: "data") == .data(Data()))
        #expect(try sample.attributeValue(forKey: "location") == .codable(Data(#"{"latitude":0,"longitude":0}"#.utf8)))

        let movie = Movie()
        #expect(movie.year == 1999)
        #expect(movie.title == "")
        #expect(movie.tags == [])
        #expect(try movie.attributeValue(forKey: "tags") == .codable(Data("[]".utf8)))
        #expect(Review().stars == 3)
        #expect(Car().wheels == 4)
        #expect(Car().seats == 5)
    }

    @Test func initialValueExpressionsRunOncePerObject() throws {
        let first = Sample()
        let second = Sample()
        #expect(first.uuid != second.uuid)
        #expect(try first.value(forKey: "uuid") as? UUID == first.uuid)
        #expect(Movie().id != Movie().id)
        // Reading twice gives the stored value, not a fresh one.
        #expect(first.uuid == first.uuid)
    }

    @Test(arguments: ["optionalString", "note", "scratch"])
    func optionalAttributesAreNilByDefault(_ key: String) throws {
        let sample = Sample()
        #expect(try sample.value(forKey: key) == nil)
        #expect(try sample.attributeValue(forKey: key) == .null)
        #expect(Sample.entity.attribute(named: key)?.isOptional == true)
    }

    @Test func optionalAttributesHoldAndClearValues() throws {
        let sample = Sample()
        #expect(sample.optionalString == nil)
        #expect(sample.note == nil)
        #expect(sample.scratch == nil)
        sample.optionalString = "set"
        sample.scratch = "in memory"
        #expect(sample.optionalString == "set")
        #expect(try sample.value(forKey: "scratch") as? String == "in memory")
        sample.optionalString = nil
        #expect(sample.optionalString == nil)
        #expect(try sample.attributeValue(forKey: "optionalString") == .null)

        let movie = Movie()
        #expect(movie.releaseDate == nil)
        #expect(movie.location == nil)
        #expect(try movie.value(forKey: "location") == nil)
        movie.location = Location(latitude: 1, longitude: 1)
        movie.location = nil
        #expect(movie.location == nil)
        #expect(try movie.attributeValue(forKey: "location") == .null)
    }

    // MARK: Decimal and Codable

    @Test func decimalArithmeticIsExact() throws {
        let sample = Sample()
        let tenth = try #require(Decimal(string: "0.1"))
        let fifth = try #require(Decimal(string: "0.2"))
        let expected = try #require(Decimal(string: "0.3"))
        sample.decimal = tenth + fifth
        #expect(sample.decimal == expected)
        #expect(try sample.value(forKey: "decimal") as? Decimal == expected)
        #expect(try sample.attributeValue(forKey: "decimal") == .decimal(expected))
    }

    @Test(arguments: [
        "0.1", "12345678901234567890.123456789", "-0.000000000000000001", "79228162514264337593543950335",
    ])
    func decimalsKeepEveryDigit(_ text: String) throws {
        let number = try #require(Decimal(string: text))
        let sample = Sample()
        sample.decimal = number
        #expect(sample.decimal == number)
        #expect(sample.decimal.description == number.description)
        #expect(try sample.value(forKey: "decimal") as? Decimal == number)
    }

    @Test func doubleWrittenToDecimalByKeyUsesItsShortestForm() throws {
        let sample = Sample()
        try sample.setValue(0.1, forKey: "decimal")
        #expect(sample.decimal == Decimal(string: "0.1"))
        try sample.setValue(Float(0.1), forKey: "decimal")
        #expect(sample.decimal == Decimal(string: "0.1"))
    }

    @Test func codableAttributesRoundTrip() throws {
        let movie = Movie()
        movie.tags = ["noir", "heist", "a/b"]
        #expect(movie.tags == ["noir", "heist", "a/b"])
        #expect(try movie.value(forKey: "tags") as? [String] == ["noir", "heist", "a/b"])
        #expect(try movie.attributeValue(forKey: "tags") == .codable(Data(#"["noir","heist","a/b"]"#.utf8)))

        movie.location = Location(latitude: -33.8568, longitude: 151.2153)
        #expect(movie.location == Location(latitude: -33.8568, longitude: 151.2153))
        guard case .codable(let data) = try movie.attributeValue(forKey: "location") else {
            Issue.record("location is not stored as JSON")
            return
        }
        #expect(
            try JSONDecoder().decode(Location.self, from: data) == Location(latitude: -33.8568, longitude: 151.2153))
    }

    @Test func codableValuesWrittenByKeyDecodeThroughTypedAccessors() throws {
        let movie = Movie()
        try movie.setValue(["b", "a"], forKey: "tags")
        #expect(movie.tags == ["b", "a"])
        try movie.setValue(Location(latitude: 5, longitude: 6), forKey: "location")
        #expect(movie.location == Location(latitude: 5, longitude: 6))
        try movie.setValue(nil, forKey: "location")
        #expect(movie.location == nil)
    }

    @Test func typedWritesOfAnEqualValueAreNotChanges() throws {
        let sample = Sample()
        sample.commitValues()
        sample.location = Location(latitude: 0, longitude: 0)
        sample.int16 = 0
        sample.code = "abc"
        #expect(!sample.hasChanges)
        #expect(sample.changedValues().isEmpty)
    }
}
