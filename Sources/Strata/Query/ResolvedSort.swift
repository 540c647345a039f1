import Foundation

/// A sort descriptor checked against an entity.
package struct ResolvedSort: Sendable {
    package var steps: [RelationshipStep]
    package var number: Int
    package var type: AttributeType
    package var ascending: Bool
    package var comparison: SortComparison
}
