import Foundation

/// A result's place in a fetch's order, as every store's `ORDER BY` defines it: its values for
/// the sort keys, then, for ties, saved objects by primary key before unsaved ones in insertion
/// order.
///
/// In-memory sorting (a fetch that includes unsaved changes) and fetched results controllers
/// both order by this one type, and the differential tests check it against the SQL order.
struct SortKey {
    /// The value of each sort key (``AttributeValue/null`` where a relationship on the way is
    /// empty).
    var values: [AttributeValue]
    /// 0 for saved objects, ordered by primary key; 1 for unsaved ones, in insertion order.
    var rank: Int
    /// The primary key, or the place in the insertion order.
    var order: Int64

    /// The key of a saved object.
    init(values: [AttributeValue], primaryKey: Int64) {
        self.values = values
        self.rank = 0
        self.order = primaryKey
    }

    /// The key of an unsaved object, `insertionIndex` places after the first unsaved one.
    init(values: [AttributeValue], insertionIndex: Int64) {
        self.values = values
        self.rank = 1
        self.order = insertionIndex
    }

    /// -1, 0 or 1 as `a` comes before, with or after `b` when sorted by `sorts`.
    static func compare(_ a: SortKey, _ b: SortKey, by sorts: [ResolvedSort]) -> Int {
        for (index, sort) in sorts.enumerated() {
            let order = sort.compare(a.values[index], b.values[index])
            if order != 0 { return order }
        }
        if a.rank != b.rank { return a.rank < b.rank ? -1 : 1 }
        return a.order == b.order ? 0 : (a.order < b.order ? -1 : 1)
    }
}

extension ResolvedSort {
    /// -1, 0 or 1 as `a` comes before, with or after `b` under this sort key, its direction
    /// included: `nil` (an empty relationship on the way included) before every value when
    /// ascending, strings by the key's ``SortComparison``, other values by their natural order.
    func compare(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        let order = compareAscending(a, b)
        return ascending ? order : -order
    }

    /// ``compare(_:_:)`` in ascending order.
    private func compareAscending(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        default: break
        }
        let kind = ValueKind(type)
        if kind.isTextual, comparison != .standard, let x = ValueComparison.text(a), let y = ValueComparison.text(b) {
            switch SortOrdering.compare(x, y, comparison) {
            case .orderedAscending: return -1
            case .orderedDescending: return 1
            case .orderedSame: return 0
            }
        }
        return ValueComparison.compare(a, b, as: kind) ?? 0
    }
}
