import Foundation

extension SortKey {
    /// The key of a live object: its current values for `sorts` (followed through to-one
    /// relationships), its primary key when saved, and `insertionIndex(object)` when not.
    init(of object: ManagedObject, by sorts: [ResolvedSort], insertionIndex: (ManagedObject) -> Int64) {
        let values = sorts.map { sort -> AttributeValue in
            guard let target = PredicateEvaluator.follow(sort.steps, from: object) else { return .null }
            return PredicateEvaluator.attribute(sort.number, of: target)
        }
        if let primaryKey = object.objectID.primaryKey {
            self.init(values: values, primaryKey: primaryKey)
        } else {
            self.init(values: values, insertionIndex: insertionIndex(object))
        }
    }
}
