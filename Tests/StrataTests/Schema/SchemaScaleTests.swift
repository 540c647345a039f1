import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Large models resolve exactly as small ones do. (How fast they build is measured by the
/// benchmarks' W11; these tests check what a build of thousands of entities holds.)
@Suite struct SchemaScaleTests {
    /// `trees` inheritance trees of `treeSize` entities: each root has two attributes and is
    /// related to the next root (`next`, inverse named on one side only, so it is adopted), each
    /// subentity one attribute of its own.
    private func forest(trees: Int, treeSize: Int) -> [EntityDescription] {
        (0..<trees).flatMap { tree -> [EntityDescription] in
            let root = "Root\(tree)"
            var relationships: [RelationshipDescription] = []
            if tree > 0 { relationships.append(.init(name: "previous", destination: "Root\(tree - 1)")) }
            if tree < trees - 1 {
                relationships.append(
                    .init(name: "next", destination: "Root\(tree + 1)", inverse: "previous", isToMany: true))
            }
            let rootDescription = EntityDescription(
                name: root,
                attributes: [
                    .init(name: "name", type: .string), .init(name: "rank", type: .integer32, isIndexed: true),
                ],
                relationships: relationships, uniquenessConstraints: [["name"]])
            let subentities = (1..<treeSize).map { number in
                EntityDescription(
                    name: "Leaf\(tree)_\(number)", superentity: root, attributes: [.init(name: "detail", type: .string)]
                )
            }
            return [rootDescription] + subentities
        }
    }

    @Test func thousandsOfEntitiesResolveLikeAFewDo() throws {
        let trees = 500
        let treeSize = 10
        let descriptions = forest(trees: trees, treeSize: treeSize)
        let schema = try Schema(descriptions)
        #expect(schema.entities.count == trees * treeSize)
        #expect(schema.entities.map(\.name) == descriptions.map(\.name))
        #expect(schema.warnings.isEmpty)
        for tree in [0, trees / 2, trees - 1] {
            let root = try #require(schema.entity(named: "Root\(tree)"))
            let leaves = (1..<treeSize).map { "Leaf\(tree)_\($0)" }
            #expect(root.subentityNames == leaves)
            #expect(root.kindNames == Set(leaves + [root.name]))
            #expect(root.relationship(named: "previous")?.inverseName == (tree > 0 ? "next" : nil))
            let leaf = try #require(schema.entity(named: leaves[4]))
            #expect(leaf.superentity === root && leaf.rootEntity === root)
            #expect(leaf.kindNames == [leaf.name] && leaf.subentityNames.isEmpty)
            #expect(leaf.attributes.map(\.name) == ["name", "rank", "detail"])
            #expect(leaf.uniquenessConstraints == [["name"]])
        }
        // A small model resolves the same entity the same way.
        let small = try Schema(forest(trees: 3, treeSize: treeSize))
        #expect(small.entity(named: "Leaf1_4")?.versionHash == schema.entity(named: "Leaf1_4")?.versionHash)
        // Declaration order changes neither entities nor the hash.
        var generator = SplitMix64(seed: 12)
        let shuffled = try Schema(descriptions.shuffled(using: &generator))
        #expect(shuffled.versionHash == schema.versionHash)
        #expect(
            shuffled.entity(named: "Root7")?.subentityNames.sorted()
                == schema.entity(named: "Root7")?.subentityNames.sorted())
        // The serialized form reads back as the same schema.
        let decoded = try Schema(serializedRepresentation: schema.serializedRepresentation())
        #expect(decoded.versionHash == schema.versionHash && decoded.entities.count == schema.entities.count)
    }

    @Test func oneEntityWithThousandsOfInversesResolvesEveryPair() throws {
        // A hub related to thousands of entities, the inverses named on the hub's side only.
        let count = 3_000
        let hub = EntityDescription(
            name: "Hub",
            relationships: (0..<count).map {
                .init(name: "items\($0)", destination: "Item\($0)", inverse: "hub", isToMany: true)
            })
        let items = (0..<count).map {
            EntityDescription(name: "Item\($0)", relationships: [.init(name: "hub", destination: "Hub")])
        }
        let schema = try Schema([hub] + items)
        #expect(schema.warnings.isEmpty)
        for number in [0, count / 2, count - 1] {
            #expect(schema.entity(named: "Item\(number)")?.relationship(named: "hub")?.inverseName == "items\(number)")
        }
    }

    @Test func deepInheritanceAndLongCyclesAreResolved() throws {
        let depth = 300
        let chain = (0..<depth).map { level in
            EntityDescription(
                name: "Level\(level)", superentity: level == 0 ? nil : "Level\(level - 1)",
                attributes: [.init(name: "field\(level)", type: .integer64)])
        }
        let schema = try Schema(Array(chain.reversed()))
        let bottom = try #require(schema.entity(named: "Level\(depth - 1)"))
        #expect(bottom.attributes.map(\.name) == (0..<depth).map { "field\($0)" })
        #expect(schema.entity(named: "Level0")?.kindNames.count == depth)
        #expect(bottom.rootEntity.name == "Level0")

        // A cycle through 1,000 entities is one problem, named at the member declared first.
        let size = 1_000
        let cycle = (0..<size).map { EntityDescription(name: "C\($0)", superentity: "C\(($0 + 1) % size)") }
        let error = try #require(throws: StrataError.self) { try Schema(Array(cycle[400...]) + Array(cycle[..<400])) }
        #expect(error.details.map(\.code) == [.inheritanceCycle])
        #expect(error.details.first?.entityName == "C400")
        #expect(error.details.first?.message.hasPrefix("Entity 'C400' inherits from itself: C400 -> C401 -> ") == true)
        #expect(error.details.first?.message.hasSuffix(" -> C399 -> C400.") == true)
    }
}
