import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// The relationship kinds and values of a Core Data store that the first fixture
/// (`CoreDataImportTests`) lacks: ordered one-to-many and many-to-many relationships, a to-many
/// relationship without inverse, transformable values archived by `NSSecureUnarchiveFromData`,
/// and a store larger than one import batch. Laid out per `Fixtures/CoreData/FORMAT.md`.
@Suite(.timeLimit(.minutes(10))) struct CoreDataRelationshipImportTests {
    let directory: TemporaryDirectory
    var source: URL { directory.url.appendingPathComponent("Library.sqlite") }
    var destination: URL { directory.url.appendingPathComponent("Imported.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Album (1) —tracks, ordered→ Song.album; Playlist (2) —songs, ordered⇄ Song.playlists;
    /// Playlist —featuredAlbums (no inverse)→ Album; Song (3) with a transformable `info`.
    static func schema() throws -> Schema {
        try Schema([
            EntityDescription(
                name: "Album", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [RelationshipDescription(name: "tracks", destination: "Song", inverse: "album", isToMany: true, isOrdered: true)]),
            EntityDescription(
                name: "Playlist", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true),
                    RelationshipDescription(name: "featuredAlbums", destination: "Album", isToMany: true),
                ]),
            EntityDescription(
                name: "Song",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "info", type: .codable, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(name: "album", destination: "Album", inverse: "tracks"),
                    RelationshipDescription(name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true),
                    RelationshipDescription(name: "similar", destination: "Song", inverse: "similar", isToMany: true),
                ]),
        ])
    }

    /// What `NSSecureUnarchiveFromData` stores for a dictionary: an `NSKeyedArchiver` archive
    /// (corelibs Foundation writes the same format as Apple's).
    static func archivedInfo(bpm: Int, tags: [String], added: Date) throws -> Data {
        let info: NSDictionary = ["bpm": NSNumber(value: bpm), "tags": tags as NSArray, "added": added as NSDate]
        return try NSKeyedArchiver.archivedData(withRootObject: info, requiringSecureCoding: false)
    }

    /// Writes the store: `songs` songs on two albums, whose orders (Z_FOK_ALBUM, Z_FOK_3SONGS)
    /// differ from their keys' order.
    func makeCoreDataStore(songs: Int = 4, metadataEntities: [String] = ["Album", "Playlist", "Song"]) throws {
        let queue = try DatabaseQueue(path: source.path)
        // WAL, as Core Data writes stores since iOS 7: reading must not leave -wal and -shm behind.
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZALBUM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR );
                CREATE TABLE ZPLAYLIST ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
                CREATE TABLE ZSONG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZALBUM INTEGER, Z_FOK_ALBUM INTEGER, ZTITLE VARCHAR, ZINFO BLOB );
                CREATE TABLE Z_2SONGS ( Z_2PLAYLISTS INTEGER, Z_3SONGS INTEGER, Z_FOK_3SONGS INTEGER, PRIMARY KEY (Z_2PLAYLISTS, Z_3SONGS) );
                CREATE INDEX Z_2SONGS_Z_3SONGS_INDEX ON Z_2SONGS (Z_3SONGS, Z_2PLAYLISTS);
                CREATE TABLE Z_2FEATUREDALBUMS ( Z_2FEATUREDALBUMS1 INTEGER, Z_1FEATUREDALBUMS INTEGER, PRIMARY KEY (Z_2FEATUREDALBUMS1, Z_1FEATUREDALBUMS) );
                CREATE TABLE Z_3SIMILAR ( Z_3SIMILAR INTEGER, REFLEXIVE INTEGER, PRIMARY KEY (Z_3SIMILAR, REFLEXIVE) );
                CREATE INDEX ZSONG_ZALBUM_INDEX ON ZSONG (ZALBUM);
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                INSERT INTO ZALBUM VALUES (1, 1, 1, 'Blue'), (2, 1, 1, 'Kind');
                INSERT INTO ZPLAYLIST VALUES (1, 2, 1, 'Evening'), (2, 2, 1, 'Empty');
                INSERT INTO Z_2FEATUREDALBUMS VALUES (1, 2), (1, 1);
                """)
            try db.execute(
                sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Album', 0, 2), (2, 'Playlist', 0, 2), (3, 'Song', 0, ?)", arguments: [songs])
            // Song k is on album 1 + k % 2; each album lists its songs in descending key order
            // (order keys 1024·position); the playlist holds songs 3, 1, 2 in that order.
            for key in 1...songs {
                let info = key == 1 ? try Self.archivedInfo(bpm: 120, tags: ["jazz", "modal"], added: Date(timeIntervalSinceReferenceDate: 1000)) : nil
                try db.execute(
                    sql: "INSERT INTO ZSONG VALUES (?, 3, 1, ?, ?, ?, ?)",
                    arguments: [key, 1 + key % 2, 1024 * (songs - key + 1), "Song \(key)", info])
            }
            if songs >= 3 {
                try db.execute(sql: "INSERT INTO Z_2SONGS VALUES (1, 3, 1024), (1, 1, 2048), (1, 2, 3072)")
                // A relationship that is its own inverse: its second column is REFLEXIVE.
                try db.execute(sql: "INSERT INTO Z_3SIMILAR VALUES (1, 2), (1, 3)")
            }
            let metadata: [String: Any] = [
                "NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3, "NSPersistenceFrameworkVersion": 1447,
                "NSStoreModelVersionIdentifiers": [""],
                "NSStoreModelVersionHashes": Dictionary(uniqueKeysWithValues: metadataEntities.map { ($0, Data(repeating: 7, count: 32)) }),
            ]
            let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, '4B1D0000-0000-4000-8000-0000000000AB', ?)", arguments: [plist])
        }
        try queue.close()
    }

    func titles(_ value: Any?) throws -> [String] {
        let songs = try #require(value as? [ManagedObject])
        return try songs.map { try #require(try $0.value(forKey: "title") as? String) }
    }

    @Test func orderedAndInverseLessRelationshipsKeepTheirMembersAndOrder() throws {
        try makeCoreDataStore()
        let before = try Data(contentsOf: source)
        let schema = try Self.schema()
        #expect(try CoreDataImport.importStore(at: source, schema: schema, to: destination) == 8)
        #expect(try Data(contentsOf: source) == before)
        #expect(!FileManager.default.fileExists(atPath: source.path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: source.path + "-shm"))

        let container = try PersistentContainer(name: "Imported", schema: schema, storeDescriptions: [.sqlite(destination)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let albums = try context.fetch(FetchRequest<ManagedObject>(entityName: "Album", sortDescriptors: [FetchSortDescriptor(key: "title")]))
        // Ordered one-to-many, from Z_FOK_ALBUM: descending keys.
        #expect(try titles(albums[0].value(forKey: "tracks")) == ["Song 4", "Song 2"])
        #expect(try titles(albums[1].value(forKey: "tracks")) == ["Song 3", "Song 1"])
        let playlists = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist", sortDescriptors: [FetchSortDescriptor(key: "name")]))
        let evening = playlists[1]
        // Ordered many-to-many, from Z_FOK_3SONGS; and its inverse.
        #expect(try titles(evening.value(forKey: "songs")) == ["Song 3", "Song 1", "Song 2"])
        #expect(try titles(playlists[0].value(forKey: "songs")) == [])
        let song3 = try #require(try evening.value(forKey: "songs") as? [ManagedObject]).first
        #expect((try song3?.value(forKey: "playlists") as? Set<ManagedObject>)?.count == 1)
        #expect((try song3?.value(forKey: "album") as? ManagedObject) == albums[1])
        // A many-to-many relationship that is its own inverse links both ways.
        let song1 = try #require(try evening.value(forKey: "songs") as? [ManagedObject])[1]
        #expect(try titles((song1.value(forKey: "similar") as? Set<ManagedObject>).map { $0.sorted { $0.objectID.description < $1.objectID.description } })
            .sorted() == ["Song 2", "Song 3"])
        #expect((try song3?.value(forKey: "similar") as? Set<ManagedObject>) == [song1])
        // To-many without inverse.
        let featured = try #require(try evening.value(forKey: "featuredAlbums") as? Set<ManagedObject>)
        #expect(Set(try featured.map { try $0.value(forKey: "title") as? String }) == ["Blue", "Kind"])
        // The archived dictionary arrives as JSON for Codable.
        let info = try #require(song1.value(forKey: "info") as? [String: Any])
        #expect(info["bpm"] as? Int == 120)
        #expect(info["tags"] as? [String] == ["jazz", "modal"])
        #expect(info["added"] as? Double == 1000)
    }

    @Test func storesLargerThanABatchImportWithRelationshipsAcrossBatches() throws {
        let songs = 2 * StoreSnapshotImporter.batchSize + 17
        try makeCoreDataStore(songs: songs)
        let schema = try Self.schema()
        let phases = LockedBox<[CoreDataImport.Progress]>([])
        try CoreDataImport.importStore(at: source, schema: schema, to: destination) { progress in
            phases.withLock { $0.append(progress) }
        }
        let reports = phases.withLock { $0 }
        #expect(reports.map(\.phase).first == .objects)
        #expect(reports.contains { $0.phase == .relationships })
        #expect(reports.last?.completedUnitCount == reports.last?.totalUnitCount)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted })
        #expect(Set(reports.map(\.totalUnitCount)).count == 1)  // known from the start
        #expect(reports.contains { $0.phase == .links })

        let container = try PersistentContainer(name: "Imported", schema: schema, storeDescriptions: [.sqlite(destination)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Song")) == songs)
        let blue = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Album", predicate: try FetchPredicate(format: "title == 'Blue'"))).first)
        let tracks = try titles(blue.value(forKey: "tracks"))
        let even = Array(stride(from: songs % 2 == 0 ? songs : songs - 1, through: 1, by: -2).map { "Song \($0)" })
        #expect(tracks.count == even.count)
        #expect(tracks.first == even.first && tracks.last == even.last)
        #expect(tracks == even, "the tracks of Blue are not its songs in descending order")
    }

    @Test func theStoreOpensReadOnlyWithoutBeingWritten() throws {
        try makeCoreDataStore()
        let before = try Data(contentsOf: source)
        let container = try CoreDataImport.openReadOnly(at: source, schema: try Self.schema())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Song")) == 4)
        let album = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Album")).first)
        try album.setValue("Changed", forKey: "title")
        let error = #expect(throws: StrataError.self) { try context.save() }
        #expect(error?.code == .storeNotWritable)
        #expect(try Data(contentsOf: source) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Library.sqlite"])
    }

    @Test func theMetadataMustNameEveryEntityOfTheVersion() throws {
        try makeCoreDataStore(metadataEntities: ["Album", "Song"])
        let reader = #expect(throws: StrataError.self) { try CoreDataStoreReader(url: source, schema: try Self.schema()) }
        #expect(reader?.code == .incompatibleSchema)
        #expect(reader?.message.contains("no version hash for Playlist") == true)
    }

    @Test func theReaderReportsTheStoreUUIDAndVersionHashEntities() throws {
        try makeCoreDataStore()
        let reader = try CoreDataStoreReader(url: source, schema: try Self.schema())
        #expect(reader.storeUUID == "4B1D0000-0000-4000-8000-0000000000AB")
        #expect(reader.versionHashEntityNames == ["Album", "Playlist", "Song"])
        #expect(try reader.links().map(\.relationship).sorted() == ["featuredAlbums", "similar", "songs", "tracks"])
    }

    @Test func relationshipsTheModelLeavesUnpairedAreNotMerged() throws {
        // Album.promotedIn (to-one) and Playlist.featuredAlbums (to-many) have no inverses: in an
        // Xcode model they stay apart, as Core Data stored them; a schema built in code pairs
        // them, and the import refuses it rather than merging their links.
        try makeCoreDataStore()
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE ZALBUM ADD COLUMN ZPROMOTEDIN INTEGER")
            try db.execute(sql: "UPDATE ZALBUM SET ZPROMOTEDIN = 2")  // the "Empty" playlist
        }
        try queue.close()
        var entities = try Self.schema().entities.map(\.declaration)
        entities[0].relationships.append(RelationshipDescription(name: "promotedIn", destination: "Playlist"))
        let paired = try Schema(entities)
        #expect(paired.entity(named: "Album")?.relationship(named: "promotedIn")?.inverseName == "featuredAlbums")
        let error = #expect(throws: StrataError.self) { try CoreDataStoreReader(url: source, schema: paired) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains("pairs Album.promotedIn with Playlist.featuredAlbums") == true, "\(String(describing: error))")

        let model = try XcodeModel.parse(Data(Self.xcodeModel.utf8), name: "Library")
        #expect(model.schema.entity(named: "Album")?.relationship(named: "promotedIn")?.inverseName == nil)
        try CoreDataImport.importStore(at: source, schema: model.schema, to: destination)
        let container = try PersistentContainer(name: "Imported", schema: model.schema, storeDescriptions: [.sqlite(destination)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for album in try context.fetch(FetchRequest<ManagedObject>(entityName: "Album")) {
            #expect(try (album.value(forKey: "promotedIn") as? ManagedObject)?.value(forKey: "name") as? String == "Empty")
        }
        let evening = try #require(
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist", predicate: try FetchPredicate(format: "name == 'Evening'"))).first)
        #expect((try evening.value(forKey: "featuredAlbums") as? Set<ManagedObject>)?.count == 2)
    }

    /// The library model as Xcode writes it, with Album.promotedIn.
    static let xcodeModel = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" systemVersion="22A380" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Album" representedClassName="Album" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <relationship name="tracks" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Song" inverseName="album" inverseEntity="Song"/>
                <relationship name="promotedIn" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Playlist"/>
            </entity>
            <entity name="Playlist" representedClassName="Playlist" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="songs" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Song" inverseName="playlists" inverseEntity="Song"/>
                <relationship name="featuredAlbums" toMany="YES" deletionRule="Nullify" destinationEntity="Album"/>
            </entity>
            <entity name="Song" representedClassName="Song" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="info" optional="YES" attributeType="Transformable"/>
                <relationship name="album" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Album" inverseName="tracks" inverseEntity="Album"/>
                <relationship name="playlists" toMany="YES" deletionRule="Nullify" destinationEntity="Playlist" inverseName="songs" inverseEntity="Playlist"/>
                <relationship name="similar" toMany="YES" deletionRule="Nullify" destinationEntity="Song" inverseName="similar" inverseEntity="Song"/>
            </entity>
        </model>
        """

    @Test func aMissingOrderColumnIsAnIncompatibleLayout() throws {
        try makeCoreDataStore()
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in try db.execute(sql: "ALTER TABLE Z_2SONGS DROP COLUMN Z_FOK_3SONGS") }
        try queue.close()
        let error = #expect(throws: StrataError.self) { try CoreDataStoreReader(url: source, schema: try Self.schema()) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains("no column ordering Playlist.songs in Z_2SONGS") == true)
    }

    @Test func anArchivedObjectWithNoJSONFormIsATypedErrorNamingItsClass() throws {
        try makeCoreDataStore()
        let archive = try NSKeyedArchiver.archivedData(withRootObject: Swatch(), requiringSecureCoding: false)
        let queue = try DatabaseQueue(path: source.path)
        try queue.write { db in try db.execute(sql: "UPDATE ZSONG SET ZINFO = ? WHERE Z_PK = 2", arguments: [archive]) }
        try queue.close()
        let error = #expect(throws: StrataError.self) {
            try CoreDataImport.importStore(at: source, schema: try Self.schema(), to: destination)
        }
        #expect(error?.code == .unrepresentableValue)
        #expect(error?.message.contains("Swatch") == true)
        #expect(error?.propertyName == "info")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}

/// A class with no JSON form, archived as a transformable colour would be (top-level, as
/// corelibs Foundation archives only top-level classes).
final class Swatch: NSObject, NSCoding {
    func encode(with coder: NSCoder) { coder.encode(0.5, forKey: "red") }
    init?(coder: NSCoder) {}
    override init() {}
}
