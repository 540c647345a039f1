import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// A store written the way Core Data writes one (see `Fixtures/CoreData/FORMAT.md`), built by
/// hand, imported into a Strata store.
@Suite(.timeLimit(.minutes(10))) struct CoreDataImportTests {
    let directory: TemporaryDirectory
    var source: URL { directory.url.appendingPathComponent("Movies.sqlite") }
    var destination: URL { directory.url.appendingPathComponent("Imported.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The model that "wrote" the store: every attribute type Core Data stores in a column, a
    /// subentity, to-one, one-to-many and many-to-many relationships.
    static func schema(withScore: Bool = true) throws -> Schema {
        var movieAttributes = [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "year", type: .integer16),
            AttributeDescription(name: "runtime", type: .integer32),
            AttributeDescription(name: "gross", type: .integer64),
            AttributeDescription(name: "rating", type: .double, isOptional: true),
            AttributeDescription(name: "released", type: .date),
            AttributeDescription(name: "budget", type: .decimal),
            AttributeDescription(name: "poster", type: .binaryData, isOptional: true, allowsExternalBinaryDataStorage: true),
            AttributeDescription(name: "id", type: .uuid),
            AttributeDescription(name: "homepage", type: .uri, isOptional: true),
            AttributeDescription(name: "watched", type: .boolean),
        ]
        if withScore { movieAttributes.append(AttributeDescription(name: "score", type: .float)) }
        return try Schema([
            EntityDescription(
                name: "Movie", attributes: movieAttributes,
                relationships: [
                    RelationshipDescription(name: "director", destination: "Person", inverse: "movies"),
                    RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie", isToMany: true),
                    RelationshipDescription(name: "tags", destination: "Tag", inverse: "movies", isToMany: true),
                ]),
            EntityDescription(
                name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [RelationshipDescription(name: "movies", destination: "Movie", inverse: "director", isToMany: true)]),
            EntityDescription(name: "Director", superentity: "Person", attributes: [AttributeDescription(name: "awards", type: .integer16)]),
            EntityDescription(
                name: "Review", attributes: [AttributeDescription(name: "stars", type: .integer16), AttributeDescription(name: "text", type: .string)],
                relationships: [RelationshipDescription(name: "movie", destination: "Movie", inverse: "reviews")]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [RelationshipDescription(name: "movies", destination: "Movie", inverse: "tags", isToMany: true)]),
        ])
    }

    static let heatID = UUID(uuidString: "5F0C0B6C-3F2B-4C55-9E57-1C5D2B7E0A11")!
    static let poster = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])
    static let externalPoster = Data(repeating: 0xAB, count: 300)

    /// Writes the Core Data store: entity numbers by case-insensitive name order (Movie 1,
    /// Person 2, Director 3, Review 4, Tag 5), tables per root entity, Z_PRIMARYKEY and
    /// Z_METADATA, a join table for Movie.tags ↔ Tag.movies, and an external-data file.
    func makeCoreDataStore(withScore: Bool = true) throws {
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZMOVIE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDIRECTOR INTEGER, Z2_DIRECTOR INTEGER, \
                ZGROSS INTEGER, ZRUNTIME INTEGER, ZWATCHED INTEGER, ZYEAR INTEGER, ZBUDGET DECIMAL, ZRATING FLOAT\(withScore ? ", ZSCORE FLOAT" : ""), \
                ZRELEASED TIMESTAMP, ZHOMEPAGE VARCHAR, ZTITLE VARCHAR, ZID BLOB, ZPOSTER BLOB );
                CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAWARDS INTEGER, ZNAME VARCHAR );
                CREATE TABLE ZREVIEW ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZMOVIE INTEGER, ZSTARS INTEGER, ZTEXT VARCHAR );
                CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
                CREATE TABLE Z_1TAGS ( Z_1MOVIES INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_1MOVIES, Z_5TAGS) );
                CREATE INDEX ZMOVIE_ZDIRECTOR_INDEX ON ZMOVIE (ZDIRECTOR);
                CREATE INDEX ZREVIEW_ZMOVIE_INDEX ON ZREVIEW (ZMOVIE);
                CREATE INDEX Z_1TAGS_Z_5TAGS_INDEX ON Z_1TAGS (Z_5TAGS, Z_1MOVIES);
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Movie', 0, 2), (2, 'Person', 0, 2), (3, 'Director', 2, 0), (4, 'Review', 0, 2), (5, 'Tag', 0, 2);
                INSERT INTO ZPERSON VALUES (1, 3, 1, 2, 'Michael Mann'), (2, 2, 1, NULL, 'Val Kilmer');
                INSERT INTO ZTAG VALUES (1, 5, 1, 'crime'), (2, 5, 1, 'night');
                INSERT INTO Z_1TAGS VALUES (1, 1), (1, 2), (2, 1);
                INSERT INTO ZREVIEW VALUES (1, 4, 1, 1, 5, 'Great'), (2, 4, 1, 1, 4, 'Long');
                """)
            let uuid = withUnsafeBytes(of: Self.heatID.uuid) { Data($0) }
            let score: [any DatabaseValueConvertible] = withScore ? [Double(Float(7.5))] : []
            try db.execute(
                sql: "INSERT INTO ZMOVIE VALUES (1, 1, 3, 1, 3, 187436818, 170, 1, 1995, 60000000.5, 8.3\(withScore ? ", ?" : ""), 1.5e8, 'https://example.com/heat', 'Heat', ?, ?)",
                arguments: StatementArguments(score + [uuid, Data([0x01]) + Self.poster]))
            try db.execute(
                sql: "INSERT INTO ZMOVIE VALUES (2, 1, 1, NULL, NULL, 0, 122, 0, 1981, 5500000, NULL\(withScore ? ", 6" : ""), -3.5e7, NULL, 'Thief', ?, ?)",
                arguments: [withUnsafeBytes(of: UUID().uuid) { Data($0) }, Data([0x02]) + Data("6F3E-EXTERNAL".utf8) + Data([0])])
            let metadata: [String: Any] = [
                "NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3, "NSPersistenceFrameworkVersion": 1447,
                "NSStoreModelVersionIdentifiers": [""],
                "NSStoreModelVersionHashes": Dictionary(uniqueKeysWithValues: ["Movie", "Person", "Director", "Review", "Tag"].map { ($0, Data(repeating: 7, count: 32)) }),
            ]
            let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: ["9C1B8E4A-0000-4000-8000-00000000CAFE", plist])
        }
        try queue.close()
        let external = directory.url.appendingPathComponent(".Movies_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try Self.externalPoster.write(to: external.appendingPathComponent("6F3E-EXTERNAL"))
    }

    @Test func importsEveryAttributeTypeAndRelationshipKind() throws {
        try makeCoreDataStore()
        let before = try Data(contentsOf: source)
        let schema = try Self.schema()
        let count = try CoreDataImport.importStore(at: source, schema: schema, to: destination)
        #expect(count == 8)  // two movies, people, reviews and tags
        #expect(try Data(contentsOf: source) == before)  // read, never written

        let container = try PersistentContainer(name: "Imported", schema: schema, storeDescriptions: [.sqlite(destination)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let movies = try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", sortDescriptors: [FetchSortDescriptor(key: "title")]))
        #expect(movies.count == 2)
        let heat = try #require(movies.first)
        #expect(try heat.value(forKey: "title") as? String == "Heat")
        #expect(try heat.value(forKey: "year") as? Int16 == 1995)
        #expect(try heat.value(forKey: "runtime") as? Int32 == 170)
        #expect(try heat.value(forKey: "gross") as? Int64 == 187_436_818)
        #expect(try heat.value(forKey: "rating") as? Double == 8.3)
        #expect(try heat.value(forKey: "score") as? Float == 7.5)
        #expect(try heat.value(forKey: "released") as? Date == Date(timeIntervalSinceReferenceDate: 1.5e8))
        #expect(try heat.value(forKey: "budget") as? Decimal == Decimal(string: "60000000.5"))
        #expect(try heat.value(forKey: "poster") as? Data == Self.poster)
        #expect(try heat.value(forKey: "id") as? UUID == Self.heatID)
        #expect(try heat.value(forKey: "homepage") as? URL == URL(string: "https://example.com/heat"))
        #expect(try heat.value(forKey: "watched") as? Bool == true)
        let director = try #require(try heat.value(forKey: "director") as? ManagedObject)
        #expect(director.entity.name == "Director")
        #expect(try director.value(forKey: "awards") as? Int16 == 2)
        #expect((try heat.value(forKey: "reviews") as? Set<ManagedObject>)?.count == 2)
        let tags = try #require(try heat.value(forKey: "tags") as? Set<ManagedObject>)
        #expect(Set(try tags.map { try $0.value(forKey: "name") as? String }) == ["crime", "night"])

        let thief = movies[1]
        #expect(try thief.value(forKey: "rating") == nil)
        #expect(try thief.value(forKey: "watched") as? Bool == false)
        #expect(try thief.value(forKey: "released") as? Date == Date(timeIntervalSinceReferenceDate: -3.5e7))
        #expect(try thief.value(forKey: "poster") as? Data == Self.externalPoster)  // from _EXTERNAL_DATA
        #expect(try thief.value(forKey: "director") == nil)
        #expect((try thief.value(forKey: "tags") as? Set<ManagedObject>)?.count == 1)
        let people = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
        #expect(people.count == 2)  // the director (a subentity) and the actor
    }

    @Test func theModelVersionIsDetectedFromTheLayout() throws {
        try makeCoreDataStore(withScore: false)
        let bundleURL = directory.url.appendingPathComponent("Movies.xcdatamodeld")
        for (name, withScore) in [("Movies", false), ("Movies 2", true)] {
            let folder = bundleURL.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.xcodeModel(withScore: withScore).write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Movies 2.xcdatamodel</string></dict></plist>
            """.write(to: bundleURL.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        let bundle = try XcodeModelBundle.load(contentsOf: bundleURL)
        #expect(try CoreDataImport.versions(of: bundle, forStoreAt: source).map(\.name) == ["Movies"])
        // The current version does not fit: importing with it is a typed error naming the column.
        let error = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: source, schema: bundle.currentVersion.schema, to: destination)
        }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains("ZSCORE") == true)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func coreDataHistoryAndCloudKitEntitiesAreNotTheModels() throws {
        try makeCoreDataStore()
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 0), (16002, 'TRANSACTION', 0, 0), (16003, 'TRANSACTIONSTRING', 0, 0);
                CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER );
                CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP TIMESTAMP, ZAUTHOR INTEGER );
                INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 700000000, NULL);
                INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 1, 1);
                -- CloudKit mirroring: its entities' numbers are not documented; their names are.
                INSERT INTO Z_PRIMARYKEY VALUES (7, 'NSCKRecordMetadata', 0, 1), (8, 'NSCKRecordZoneMetadata', 0, 1);
                CREATE TABLE ANSCKRECORDMETADATA ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER, ZCKRECORDNAME VARCHAR );
                INSERT INTO ANSCKRECORDMETADATA VALUES (1, 7, 1, 1, 1, 'Heat');
                """)
        }
        try queue.close()
        #expect(try CoreDataImport.importStore(at: source, schema: try Self.schema(), to: destination) == 8)
    }

    @Test func siblingPropertiesOfOneNameAreRefusedNotMisread() throws {
        try makeCoreDataStore()
        var entities = try Self.schema().entities.map(\.declaration)
        entities.append(EntityDescription(name: "Actor", superentity: "Person", attributes: [AttributeDescription(name: "awards", type: .integer16)]))
        let error = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: source, schema: try Schema(entities), to: destination)
        }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains("Actor and Director each declare awards") == true)
    }

    @Test(arguments: [
        "UPDATE ZMOVIE SET ZPOSTER = X'07AA' WHERE Z_PK = 1",  // not an external-storage marker
        "UPDATE ZMOVIE SET ZPOSTER = X'022E2E2F4D6F766965732E73716C69746500' WHERE Z_PK = 2",  // 0x02 "../Movies.sqlite"
        "UPDATE ZREVIEW SET Z_ENT = 99 WHERE Z_PK = 1",  // an entity number Z_PRIMARYKEY lacks
    ])
    func damagedValuesAreCorruptStoreErrors(damage: String) throws {
        try makeCoreDataStore()
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in try db.execute(sql: damage) }
        try queue.close()
        let error = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: source, schema: try Self.schema(), to: destination)
        }
        #expect(error?.code == .corruptStore)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func badInputIsATypedError() throws {
        // A Strata store is not a Core Data store.
        let strata = directory.url.appendingPathComponent("Strata.sqlite")
        try PersistentContainer(name: "S", schema: try Self.schema(), storeDescriptions: [.sqlite(strata)]).close()
        let notCoreData = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: strata, schema: try Self.schema(), to: destination)
        }
        #expect(notCoreData?.code == .notAStore)
        // An existing destination is never overwritten.
        try makeCoreDataStore()
        try Data("keep".utf8).write(to: destination)
        let exists = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: source, schema: try Self.schema(), to: destination)
        }
        #expect(exists?.code == .storeNotWritable)
        #expect(try Data(contentsOf: destination) == Data("keep".utf8))
    }

    /// The Xcode model of the store, with or without `score`.
    static func xcodeModel(withScore: Bool) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Movie" representedClassName="Movie" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="year" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="runtime" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="gross" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="rating" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="released" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="budget" attributeType="Decimal"/>
                <attribute name="poster" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="homepage" optional="YES" attributeType="URI"/>
                <attribute name="watched" attributeType="Boolean" usesScalarValueType="YES"/>
                \(withScore ? "<attribute name=\"score\" attributeType=\"Float\" usesScalarValueType=\"YES\"/>" : "")
                <relationship name="director" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="movies" inverseEntity="Person"/>
                <relationship name="reviews" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Review" inverseName="movie" inverseEntity="Review"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="movies" inverseEntity="Tag"/>
            </entity>
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="movies" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Movie" inverseName="director" inverseEntity="Movie"/>
            </entity>
            <entity name="Director" representedClassName="Director" parentEntity="Person" syncable="YES">
                <attribute name="awards" attributeType="Integer 16" usesScalarValueType="YES"/>
            </entity>
            <entity name="Review" representedClassName="Review" syncable="YES">
                <attribute name="stars" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="text" attributeType="String"/>
                <relationship name="movie" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Movie" inverseName="reviews" inverseEntity="Movie"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="movies" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Movie" inverseName="tags" inverseEntity="Movie"/>
            </entity>
        </model>
        """
    }
}
