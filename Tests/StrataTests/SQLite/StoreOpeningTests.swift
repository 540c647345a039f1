import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What opening a file does to it: refusals leave the folder as it was, opening and closing
/// without saving changes no byte, read-only stores are never written, interrupted creations
/// and transactions recover, damaged stores refuse writes.
@Suite struct StoreOpeningTests {
    static func schema() throws -> Schema { try Schema([Movie.self]) }

    /// Every file in `folder` with its contents.
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let url = folder.appendingPathComponent(name)
            let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
            files[name] = type == .typeRegular ? try Data(contentsOf: url) : Data("<\(type?.rawValue ?? "?")>".utf8)
        }
        return files
    }

    /// The names of the files that differ, with their sizes before and after.
    static func differences(_ before: [String: Data], _ after: [String: Data]) -> [String] {
        Set(before.keys).union(after.keys).sorted().compactMap { name in
            guard before[name] != after[name] else { return nil }
            var changed = ""
            if let old = before[name], let new = after[name], old.count == new.count {
                let bytes = zip(old, new).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
                changed = " at bytes \(bytes.prefix(8))"
            }
            return "\(name): \(before[name]?.count ?? -1) -> \(after[name]?.count ?? -1) bytes\(changed)"
        }
    }

    /// Makes a store with one movie at `url` and closes it.
    static func makeStore(at url: URL, schema: Schema? = nil, title: String = "Heat") throws {
        let container = try PersistentContainer(name: "Make", schema: schema ?? Self.schema(), storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = title
        try context.save()
        try container.close()
    }

    /// A way a file can fail to be a store of `schema`, and the error opening it must give.
    struct RefusalCase: Sendable, CustomTestStringConvertible {
        let name: String
        let code: StrataError.Code
        let make: @Sendable (URL) throws -> Void
        var testDescription: String { name }
    }

    static let refusalCases: [RefusalCase] = [
        RefusalCase(name: "a text file", code: .notAStore) { url in
            try Data("hello, this is not a database".utf8).write(to: url)
        },
        RefusalCase(name: "a foreign database in rollback mode", code: .notAStore) { url in
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
            try queue.close()
        },
        RefusalCase(name: "a foreign database in WAL mode (as Core Data makes)", code: .notAStore) { url in
            let pool = try DatabasePool(path: url.path)
            try pool.write {
                try $0.execute(sql: "CREATE TABLE ZMOVIE (Z_PK INTEGER PRIMARY KEY, ZTITLE TEXT); INSERT INTO ZMOVIE VALUES (1, 'Heat')")
            }
            try pool.close()
        },
        RefusalCase(name: "an empty foreign database with a user version", code: .notAStore) { url in
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { try $0.execute(sql: "PRAGMA user_version = 42") }
            try queue.close()
        },
        RefusalCase(name: "an empty foreign database with an application ID", code: .notAStore) { url in
            let pool = try DatabasePool(path: url.path)
            try pool.write { try $0.execute(sql: "PRAGMA application_id = 1234") }
            try pool.close()
        },
        RefusalCase(name: "a store of another schema", code: .incompatibleSchema) { url in
            let other = try Schema([EntityDescription(name: "Movie", attributes: [.init(name: "name", type: .string)])])
            let container = try PersistentContainer(name: "Other", schema: other, storeDescriptions: [.sqlite(url)])
            try container.close()
        },
        RefusalCase(name: "a store of a future format", code: .incompatibleSchema) { url in
            try makeStore(at: url)
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { try $0.execute(sql: "UPDATE \"_strata_metadata\" SET value = CAST('9' AS BLOB) WHERE key = 'format'") }
            try queue.close()
        },
        RefusalCase(name: "a truncated store", code: .corruptStore) { url in
            try makeStore(at: url)
            let data = try Data(contentsOf: url)
            try data.prefix(data.count / 2).write(to: url)
        },
        RefusalCase(name: "a store cut inside its header", code: .corruptStore) { url in
            try makeStore(at: url)
            try Data(contentsOf: url).prefix(40).write(to: url)
        },
        RefusalCase(name: "a folder", code: .notAStore) { url in
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        },
        RefusalCase(name: "a named pipe", code: .notAStore) { url in
            guard mkfifo(url.path, 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
        },
    ]

    @Test(arguments: refusalCases, [false, true])
    func aRefusedFileAndItsFolderAreLeftAsTheyWere(refusal: RefusalCase, isReadOnly: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try refusal.make(url)
        let before = try Self.snapshot(directory.url)
        for _ in 0..<2 {  // a second attempt finds the same file, not one the first changed
            do {
                _ = try SQLiteStore(url: url, schema: try Self.schema(), isReadOnly: isReadOnly)
                Issue.record("\(refusal.name) was opened")
            } catch let error as StrataError {
                #expect(error.code == refusal.code, "\(refusal.name): \(error)")
                #expect(error.message.contains("It was not modified") || error.code == .incompatibleSchema)
            }
            #expect(try Self.snapshot(directory.url) == before, "\(refusal.name) changed the folder")
        }
    }

    @Test func aRefusalOfADeviceCreatesNoFileNextToIt() throws {
        let existed = FileManager.default.fileExists(atPath: "/dev/null-journal")
        do {
            _ = try SQLiteStore(url: URL(fileURLWithPath: "/dev/null"), schema: try Self.schema())
            Issue.record("/dev/null was opened")
        } catch let error as StrataError {
            #expect(error.code == .notAStore)
        }
        if !existed { #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal")) }
    }

    @Test func openingAndClosingWithoutSavingChangesNoByte() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try Self.makeStore(at: url)
        let before = try Self.snapshot(directory.url)
        #expect(before.keys.sorted() == ["Store.sqlite"])
        for _ in 0..<2 {
            let container = try PersistentContainer(name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
            #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
            try container.close()
            let after = try Self.snapshot(directory.url)
            #expect(after == before, "\(Self.differences(before, after))")
        }
    }

    @Test func aReadOnlyStoreReadsAndRefusesToSaveWithoutWriting() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try Self.makeStore(at: url)
        let before = try Self.snapshot(directory.url)

        let container = try PersistentContainer(
            name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url, isReadOnly: true)])
        let context = container.newBackgroundContext()
        let movie = try #require(try context.fetch(Movie.self).first)
        #expect(movie.title == "Heat")
        movie.title = "Ronin"
        Movie(context: context).title = "Ronin"
        do {
            try context.save()
            Issue.record("a read-only store saved")
        } catch let error as StrataError {
            #expect(error.code == .storeNotWritable)
            #expect(error.message.contains("read-only"))
        }
        #expect(context.hasChanges)  // nothing was lost: the user can save elsewhere
        try container.close()
        let after = try Self.snapshot(directory.url)
        #expect(after == before, "\(Self.differences(before, after))")
        // The store opens for writing afterwards, unchanged.
        let writable = try PersistentContainer(name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        #expect(try writable.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
    }

    @Test func aReadOnlyOpenOfAMissingStoreCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Missing.sqlite")
        do {
            _ = try SQLiteStore(url: url, schema: try Self.schema(), isReadOnly: true)
            Issue.record("a missing store was opened read-only")
        } catch let error as StrataError {
            #expect(error.code == .storeNotWritable)
        }
        #expect(try Self.snapshot(directory.url).isEmpty)
    }

    @Test func anEmptyFileBecomesAStore() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        try Self.makeStore(at: url)
        let container = try PersistentContainer(name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
    }

    /// Copies the database at `source` and its rollback journal, in the middle of a write
    /// transaction that has spilled pages into the file, to `url`: what a process killed at
    /// that moment leaves behind.
    static func leaveHotJournal(at url: URL, writing source: URL, sql: String) throws {
        let queue = try DatabaseQueue(path: source.path)
        try queue.inDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: "PRAGMA cache_size = 2")
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute(sql: sql)
            // Enough pages to overflow the cache, so some reach the file before the commit.
            try db.execute(sql: "CREATE TABLE spill (x BLOB)")
            for _ in 0..<100 { try db.execute(sql: "INSERT INTO spill VALUES (randomblob(2000))") }
            try FileManager.default.copyItem(atPath: source.path, toPath: url.path)
            try FileManager.default.copyItem(atPath: source.path + "-journal", toPath: url.path + "-journal")
            try db.execute(sql: "ROLLBACK")
        }
        try queue.close()
    }

    @Test func aStoreKilledWhileBeingCreatedOpens() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        // An empty file being made into a store: the journal says the file was empty.
        try Self.leaveHotJournal(
            at: url, writing: directory.file("scratch.sqlite"),
            sql: "CREATE TABLE \"_strata_metadata\" (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)")
        #expect((try Data(contentsOf: url)).count > 0)
        #expect(FileManager.default.fileExists(atPath: url.path + "-journal"))

        try Self.makeStore(at: url)
        let container = try PersistentContainer(name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
        #expect(!FileManager.default.fileExists(atPath: url.path + "-journal"))
    }

    @Test func aTransactionKilledHalfWayIsRolledBackOnOpen() throws {
        let directory = try TemporaryDirectory()
        let scratch = directory.file("scratch.sqlite")
        try Self.makeStore(at: scratch, title: "Heat")
        let url = directory.file("Store.sqlite")
        try Self.leaveHotJournal(at: url, writing: scratch, sql: "UPDATE \"Movie\" SET \"title\" = 'Torn'")

        // A read-only open cannot roll it back: it says so, and changes nothing.
        let before = try Self.snapshot(directory.url)
        do {
            _ = try SQLiteStore(url: url, schema: try Self.schema(), isReadOnly: true)
            Issue.record("a store with a hot journal was opened read-only")
        } catch let error as StrataError {
            #expect(error.code == .storeNotWritable)
            #expect(error.message.contains("crash"))
        }
        #expect(try Self.snapshot(directory.url) == before)

        let container = try PersistentContainer(name: "Store", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        #expect(try context.fetch(Movie.self).map(\.title) == ["Heat"])
        let ronin = Movie(context: context)
        ronin.title = "Ronin"
        try context.save()
        #expect(!FileManager.default.fileExists(atPath: url.path + "-journal"))
    }

    @Test func aDamagedStoreRefusesWritesOnceDamageIsSeen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        let schema = try Schema([Movie.self, Review.self, Person.self])
        do {
            let container = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            for index in 0..<300 {
                let review = Review(context: context)
                review.text = String(repeating: "review \(index) ", count: 20)
            }
            try context.save()
            try container.close()
        }
        // Break the root page of the Review table: fetching reviews fails, people are intact.
        let (root, pageSize) = try DatabaseQueue(path: url.path).read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'Review'") ?? 0,
             try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
        }
        #expect(root > 1)
        let handle = try FileHandle(forUpdating: url)
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 64))
        try handle.close()
        try? FileManager.default.removeItem(atPath: url.path + "-wal")
        try? FileManager.default.removeItem(atPath: url.path + "-shm")

        let container = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        do {
            _ = try context.fetch(Review.self)
            Issue.record("a damaged table was read")
        } catch let error as StrataError {
            #expect(error.code == .corruptStore)
        }
        let ann = Person(context: context)
        ann.name = "Ann"
        do {
            try context.save()
            Issue.record("a store known to be damaged was written")
        } catch let error as StrataError {
            #expect(error.code == .corruptStore)
            #expect(error.message.contains("damaged"))
        }
    }
}
