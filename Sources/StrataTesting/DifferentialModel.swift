import Foundation
import Strata

/// The small, fixed model and data that differential checks run predicates against: items with
/// integers of two widths, doubles, decimals, strings, dates and Booleans (plain and optional),
/// a to-one owner, a to-many of parts (cascade) and an ordered many-to-many of tags.
///
/// The rows hold the values where SQL and in-memory evaluation are most likely to part ways:
/// `Int64.min` and `Int64.max` (sums that overflow, sometimes only on the way), integers a
/// `Double` cannot hold, infinities of both signs, tiny and huge doubles, decimals with more
/// digits than a `Double` keeps, strings that differ only in case, diacritics or Unicode
/// normalization, empty strings, `nil` in every optional, owners without items and parts
/// without an item.
///
/// ``populate(_:reversed:)`` inserts the same rows into any context: once into a store (and
/// saved) and once, reversed, into a context with no store, where fetches are evaluated in
/// memory. Every object carries a `key` that is the same in both, so results compare by key.
public enum DifferentialModel {
    /// The entity classes of the model.
    static let types: [ManagedObject.Type] = [Item.self, Owner.self, Part.self, Tag.self]

    /// The entities a generated predicate may fetch.
    public enum Root: String, CaseIterable, Sendable {
        /// Items: every attribute type, a to-one, a to-many and a many-to-many relationship.
        case item = "Item"
        /// Owners: a to-many relationship (`items`) whose members have relationships of their own.
        case owner = "Owner"
    }

    @Entity final class Owner: ManagedObject {
        var key: Int = 0
        var name: String = ""
        var nickname: String?
        var rank: Int32?
        var joined: Date?
        @Relationship(inverse: \Item.owner) var items: Set<Item> = []
    }

    @Entity final class Item: ManagedObject {
        var key: Int = 0
        var quantity: Int64 = 0
        var small: Int16 = 0
        var ratio: Double = 0
        var weight: Double?
        var amount: Decimal = 0
        var price: Decimal?
        var name: String = ""
        var note: String?
        var date: Date = Date(timeIntervalSinceReferenceDate: 0)
        var due: Date?
        var flag: Bool = false
        var maybe: Bool?
        var owner: Owner?
        @Relationship(deleteRule: .cascade, inverse: \Part.item) var parts: Set<Part> = []
        @Relationship(inverse: \Tag.items) var tags: [Tag] = []
    }

    @Entity final class Part: ManagedObject {
        var key: Int = 0
        var size: Int64?
        var level: Int16 = 0
        var score: Double?
        var cost: Decimal?
        var label: String?
        var made: Date?
        var item: Item?
    }

    @Entity final class Tag: ManagedObject {
        var key: Int = 0
        var name: String = ""
        var boost: Double = 0
        var items: Set<Item> = []
    }

    // MARK: Rows

    private struct OwnerRow {
        var key: Int
        var name: String
        var nickname: String?
        var rank: Int32?
        var joined: Double?
    }

    private struct ItemRow {
        var key: Int
        var quantity: Int64
        var small: Int16
        var ratio: Double
        var weight: Double?
        var amount: String
        var price: String?
        var name: String
        var note: String?
        var date: Double
        var due: Double?
        var flag: Bool
        var maybe: Bool?
        var owner: Int?
        var tags: [Int]
    }

    private struct PartRow {
        var key: Int
        var item: Int?
        var size: Int64?
        var level: Int16
        var score: Double?
        var cost: String?
        var label: String?
        var made: Double?
    }

    private static let day = 86_400.0

    private static let owners: [OwnerRow] = [
        OwnerRow(key: 1, name: "Ann", nickname: nil, rank: 3, joined: 0),
        OwnerRow(key: 2, name: "ann", nickname: "Annie", rank: nil, joined: nil),
        OwnerRow(key: 3, name: "Émile", nickname: "", rank: -5, joined: -day),
        OwnerRow(key: 4, name: "zoë", nickname: "Zed", rank: Int32.max, joined: 3 * day),
        OwnerRow(key: 5, name: "Bo", nickname: nil, rank: Int32.min, joined: nil),
    ]

    private static let tags: [(key: Int, name: String, boost: Double)] = [
        (1, "drama", 0.1), (2, "Noir", 0.2), (3, "noir", 0.3), (4, "ß", -.infinity), (5, "", 1e308),
    ]

    private static let items: [ItemRow] = [
        ItemRow(
            key: 1, quantity: 0, small: 0, ratio: 0, weight: nil, amount: "0", price: nil, name: "Heat", note: nil,
            date: 0, due: nil, flag: false, maybe: nil, owner: 1, tags: [1, 2]),
        ItemRow(
            key: 2, quantity: 1, small: 1, ratio: 0.5, weight: 2.5, amount: "1.5", price: "1.5", name: "heat",
            note: "", date: day, due: day, flag: true, maybe: true, owner: 1, tags: [2]),
        ItemRow(
            key: 3, quantity: -1, small: -1, ratio: -0.5, weight: -0.5, amount: "-0.001", price: "0.1", name: "HEAT",
            note: "drama", date: -day, due: nil, flag: false, maybe: false, owner: 2, tags: [3, 5]),
        ItemRow(
            key: 4, quantity: Int64.max, small: Int16.max, ratio: 1e308, weight: 1e308,
            amount: "12345678901234567890.123456789", price: nil, name: "École", note: "Noir", date: 1e9, due: 1e9,
            flag: true, maybe: nil, owner: 1, tags: []),
        ItemRow(
            key: 5, quantity: Int64.min, small: Int16.min, ratio: -1e308, weight: nil,
            amount: "-12345678901234567890.5", price: "-2.5", name: "ecole", note: "noir", date: -1e9, due: nil,
            flag: false, maybe: nil, owner: 2, tags: [1, 3, 4]),
        ItemRow(
            key: 6, quantity: Int64.max - 1, small: 42, ratio: .infinity, weight: .infinity, amount: "100",
            price: "100", name: "e\u{301}cole", note: "x*y", date: 3600.5, due: 0, flag: true, maybe: true,
            owner: 3, tags: [4]),
        ItemRow(
            key: 7, quantity: 9_007_199_254_740_993, small: 7, ratio: -.infinity, weight: -.infinity, amount: "0.1",
            price: "0.10", name: "Straße", note: "50% off", date: 0.25, due: -0.25, flag: false, maybe: false,
            owner: 3, tags: []),
        ItemRow(
            key: 8, quantity: -9_007_199_254_740_993, small: 3, ratio: 2.5, weight: 2.5, amount: "2.5", price: "2.50",
            name: "STRASSE", note: "a?b", date: 3 * day, due: nil, flag: true, maybe: nil, owner: nil, tags: [2, 3]),
        ItemRow(
            key: 9, quantity: 42, small: 100, ratio: 1.0 / 3.0, weight: nil, amount: "7", price: nil, name: "",
            note: "🎬 film", date: 1e-3, due: nil, flag: false, maybe: true, owner: nil, tags: [1]),
        ItemRow(
            key: 10, quantity: 1000, small: 2, ratio: 9_007_199_254_740_992, weight: 42,
            amount: "0.333333333333333333333333333333333333", price: "7", name: " ", note: "it's", date: 2 * day,
            due: 2 * day, flag: true, maybe: false, owner: 4, tags: []),
        ItemRow(
            key: 11, quantity: Int64.max, small: 5, ratio: 42, weight: 1e-300, amount: "1e30", price: "-0.001",
            name: "naïve", note: "back\\slash", date: 12_345.678, due: nil, flag: false, maybe: nil, owner: 3,
            tags: [5]),
        ItemRow(
            key: 12, quantity: 7, small: -7, ratio: 1e-300, weight: 0, amount: "-7", price: "0", name: "🎬 film",
            note: "Ωmega", date: 5 * day, due: 5 * day, flag: true, maybe: true, owner: 2, tags: [1, 2, 3, 4]),
        ItemRow(
            key: 13, quantity: 3, small: 3, ratio: 0.1, weight: 0.2, amount: "3", price: "3", name: "a10", note: "a9",
            date: day, due: day, flag: true, maybe: nil, owner: 1, tags: [5, 4, 3]),
        ItemRow(
            key: 14, quantity: 2, small: 200, ratio: 0.2, weight: 0.7, amount: "0.3", price: nil, name: "x*y",
            note: nil, date: 4 * day, due: 6 * day, flag: false, maybe: false, owner: 4, tags: [2]),
        ItemRow(
            key: 15, quantity: 5, small: 9, ratio: 0.3, weight: nil, amount: "100.5", price: "99.999", name: "Ronin",
            note: "ronin", date: 2.5, due: 2.5, flag: true, maybe: nil, owner: 4, tags: [1]),
    ]

    private static let parts: [PartRow] = [
        PartRow(key: 1, item: 1, size: 1, level: 1, score: 0.1, cost: "0.1", label: "a", made: 0),
        PartRow(key: 2, item: 1, size: 2, level: 2, score: 0.2, cost: "0.2", label: "B", made: day),
        PartRow(key: 3, item: 1, size: nil, level: 3, score: 0.3, cost: nil, label: nil, made: nil),
        PartRow(key: 4, item: 2, size: Int64.max, level: 0, score: 1e308, cost: "1e30", label: "bolt", made: -day),
        PartRow(key: 5, item: 2, size: Int64.max, level: 0, score: 1e308, cost: "1e30", label: "Bolt", made: day),
        PartRow(key: 6, item: 2, size: Int64.min, level: -1, score: -1e308, cost: "-1e30", label: "nut", made: nil),
        PartRow(key: 7, item: 3, size: nil, level: 5, score: nil, cost: nil, label: nil, made: nil),
        PartRow(key: 8, item: 3, size: nil, level: 6, score: nil, cost: nil, label: "", made: nil),
        PartRow(key: 9, item: 4, size: -1, level: 1, score: .infinity, cost: "5", label: "gear", made: 2 * day),
        PartRow(key: 10, item: 4, size: 1, level: 1, score: -.infinity, cost: "-5", label: "Gear", made: 2 * day),
        PartRow(key: 11, item: 5, size: Int64.min, level: 2, score: 0.5, cost: "0.5", label: "écrou", made: 3 * day),
        PartRow(key: 12, item: 5, size: -1, level: 2, score: 0.25, cost: "0.25", label: "ecrou", made: nil),
        PartRow(key: 13, item: 6, size: 9_007_199_254_740_993, level: 3, score: 1, cost: "1", label: "x", made: 0.5),
        PartRow(key: 14, item: 6, size: 1, level: 3, score: 9_007_199_254_740_992, cost: "1", label: "X", made: 0.5),
        PartRow(key: 15, item: 6, size: 2, level: 3, score: 1e-300, cost: "0.000001", label: "xx", made: 1.5),
        PartRow(key: 16, item: 7, size: 42, level: 4, score: 2.5, cost: "2.5", label: "Straße", made: 4 * day),
        PartRow(key: 17, item: 8, size: 0, level: 0, score: 0, cost: "0", label: "0", made: 0),
        PartRow(key: 18, item: 9, size: 3, level: 9, score: 1.0 / 3.0, cost: "0.333", label: "third", made: 9),
        PartRow(key: 19, item: 9, size: 3, level: 9, score: 2.0 / 3.0, cost: "0.667", label: "Third", made: 10),
        PartRow(key: 20, item: 10, size: Int64.max, level: 1, score: nil, cost: nil, label: "max", made: nil),
        PartRow(key: 21, item: 10, size: 1, level: 1, score: nil, cost: nil, label: "one", made: nil),
        PartRow(key: 22, item: 10, size: Int64.min, level: 1, score: nil, cost: nil, label: "min", made: nil),
        PartRow(key: 23, item: 12, size: 5, level: 5, score: 5, cost: "5", label: "🎬", made: 5 * day),
        PartRow(key: 24, item: 13, size: 7, level: 2, score: 0.7, cost: "0.7", label: "a9", made: day),
        PartRow(key: 25, item: 13, size: nil, level: 2, score: nil, cost: "0.3", label: "a10", made: nil),
        PartRow(key: 26, item: 14, size: 4, level: 4, score: 4, cost: "4", label: "four", made: 4 * day),
        PartRow(key: 27, item: nil, size: 100, level: 7, score: 100, cost: "100", label: "orphan", made: 7 * day),
        PartRow(key: 28, item: 15, size: -5, level: -5, score: -5, cost: "-5", label: "RONIN", made: -5),
        PartRow(key: 29, item: 15, size: 5, level: 5, score: 5, cost: "5", label: "ronin", made: 5),
    ]

    private static let posix = Locale(identifier: "en_US_POSIX")

    private static func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: posix) ?? 0 }

    private static func date(_ seconds: Double) -> Date { Date(timeIntervalSinceReferenceDate: seconds) }

    /// Inserts the fixed rows into `context`, unsaved.
    ///
    /// - Parameters:
    ///   - context: A context of a schema that includes the model's entities.
    ///   - reversed: Inserts the objects, and the members of every to-many relationship, in the
    ///     opposite order, so that a result that depends on the order of members differs from
    ///     the one in saved order.
    static func populate(_ context: ObjectContext, reversed: Bool = false) {
        func ordered<T>(_ rows: [T]) -> [T] { reversed ? rows.reversed() : rows }
        var ownersByKey: [Int: Owner] = [:]
        for row in ordered(owners) {
            let owner = Owner(context: context)
            owner.key = row.key
            owner.name = row.name
            owner.nickname = row.nickname
            owner.rank = row.rank
            owner.joined = row.joined.map(date)
            ownersByKey[row.key] = owner
        }
        var tagsByKey: [Int: Tag] = [:]
        for row in ordered(tags) {
            let tag = Tag(context: context)
            tag.key = row.key
            tag.name = row.name
            tag.boost = row.boost
            tagsByKey[row.key] = tag
        }
        var itemsByKey: [Int: Item] = [:]
        for row in ordered(items) {
            let item = Item(context: context)
            item.key = row.key
            item.quantity = row.quantity
            item.small = row.small
            item.ratio = row.ratio
            item.weight = row.weight
            item.amount = decimal(row.amount)
            item.price = row.price.map(decimal)
            item.name = row.name
            item.note = row.note
            item.date = date(row.date)
            item.due = row.due.map(date)
            item.flag = row.flag
            item.maybe = row.maybe
            item.owner = row.owner.flatMap { ownersByKey[$0] }
            // Tags keep their order (an ordered relationship); only the inverse side's order differs.
            item.tags = row.tags.compactMap { tagsByKey[$0] }
            itemsByKey[row.key] = item
        }
        for row in ordered(parts) {
            let part = Part(context: context)
            part.key = row.key
            part.size = row.size
            part.level = row.level
            part.score = row.score
            part.cost = row.cost.map(decimal)
            part.label = row.label
            part.made = row.made.map(date)
            part.item = row.item.flatMap { itemsByKey[$0] }
        }
    }

    /// The `key` of a fetched object of the model, or `nil` for an object of another model.
    static func key(of object: ManagedObject) -> Int? {
        switch object {
        case let item as Item: item.key
        case let owner as Owner: owner.key
        case let part as Part: part.key
        case let tag as Tag: tag.key
        default: nil
        }
    }
}
