import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// An inherited many-to-many relationship is stored where its declaring entity stores it, so
/// that a subentity's links are seen from the superentity and from the other side.
@Suite struct InheritedRelationshipStorageTests {
    /// `Video` inherits `Post.tags`, whose inverse is `Tag.posts`, and the ordered `Post.clips`,
    /// whose inverse is `Tag.clippedIn`.
    static func schema() throws -> Schema {
        try Schema([
            EntityDescription(
                name: "Post", attributes: [.init(name: "title", type: .string, isOptional: true)],
                relationships: [
                    .init(name: "tags", destination: "Tag", inverse: "posts", isToMany: true),
                    .init(name: "clips", destination: "Tag", inverse: "clippedIn", isToMany: true, isOrdered: true),
                ]),
            EntityDescription(name: "Video", superentity: "Post"),
            EntityDescription(
                name: "Tag", attributes: [.init(name: "name", type: .string, isOptional: true)],
                relationships: [
                    .init(name: "posts", destination: "Post", inverse: "tags", isToMany: true),
                    .init(name: "clippedIn", destination: "Post", inverse: "clips", isToMany: true),
                ]),
        ])
    }

    /// Saves a tag "swift" and a video "v" linked through `tags` and through `clips`.
    static func fill(_ container: PersistentContainer) throws {
        let schema = container.schema
        let context = container.newBackgroundContext()
        let tag = ManagedObject(entity: try #require(schema.entity(named: "Tag")))
        context.insert(tag)
        try tag.setValue("swift", forKey: "name")
        let video = ManagedObject(entity: try #require(schema.entity(named: "Video")))
        context.insert(video)
        try video.setValue("v", forKey: "title")
        try video.setValue(Set([tag]), forKey: "tags")
        try video.setValue([tag], forKey: "clips")
        try context.save()
    }

    /// What a fresh context sees of the links.
    static func check(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        let posts = try context.fetch(
            FetchRequest<ManagedObject>(entityName: "Post", predicate: try FetchPredicate(format: "ANY tags.name == 'swift'")))
        #expect(posts.count == 1)
        let clipped = try context.fetch(
            FetchRequest<ManagedObject>(entityName: "Video", predicate: try FetchPredicate(format: "ANY clips.name == 'swift'")))
        #expect(clipped.count == 1)
        let tag = try #require(try context.fetch(entityName: "Tag").first)
        #expect((try tag.value(forKey: "posts") as? Set<ManagedObject>)?.count == 1)
        #expect((try tag.value(forKey: "clippedIn") as? Set<ManagedObject>)?.count == 1)
        let video = try #require(try context.fetch(entityName: "Video").first)
        #expect((try video.value(forKey: "tags") as? Set<ManagedObject>)?.count == 1)
        #expect((try video.value(forKey: "clips") as? [ManagedObject])?.count == 1)
    }

    @Test func aSubentitysLinksAreSeenFromEverySide() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Posts.sqlite")
        let container = try PersistentContainer(name: "Posts", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        try Self.fill(container)
        try Self.check(container)
        try container.close()
        let reopened = try PersistentContainer(name: "Posts", schema: try Self.schema(), storeDescriptions: [.sqlite(url)])
        try Self.check(reopened)
    }

    @Test func aFormatOneStoresSubentityLinksMoveToTheDeclaringEntitysTable() throws {
        let schema = try Self.schema()
        let layout = StoreLayout(schema: schema)
        #expect(!layout.formerJoinTables.isEmpty)
        let directory = try TemporaryDirectory()
        let url = directory.file("Posts.sqlite")
        let container = try PersistentContainer(name: "Posts", schema: schema, storeDescriptions: [.sqlite(url)])
        try Self.fill(container)
        try container.close()

        // Put the video's links where format 1 kept them, and mark the store format 1.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            for former in layout.formerJoinTables {
                let table = try #require(layout.tables.first { $0.name == former.table })
                var old = table
                old.name = former.name
                try db.execute(sql: old.sql)
                let video = "(SELECT \"_pk\" FROM \"Post\" WHERE \"_entity\" = 'Video')"
                try db.execute(
                    sql: "INSERT INTO \(quoted(former.name)) (\(former.columns.map { quoted($0.from) }.joined(separator: ", "))) "
                        + "SELECT \(former.columns.map { quoted($0.to) }.joined(separator: ", ")) FROM \(quoted(former.table))")
                try db.execute(sql: "DELETE FROM \(quoted(former.table)) WHERE \"_source\" IN \(video) OR \"_target\" IN \(video)")
            }
            try db.execute(sql: "DELETE FROM \"_strata_metadata\" WHERE key = 'format'")
        }
        try queue.close()

        let upgraded = try PersistentContainer(name: "Posts", schema: schema, storeDescriptions: [.sqlite(url)])
        try Self.check(upgraded)
        try upgraded.close()
        let tables = try DatabaseQueue(path: url.path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for former in layout.formerJoinTables { #expect(!tables.contains(former.name)) }
    }
}
