import BenchmarkSupport
import Foundation
import Strata

// W11: building a large schema. Strata only, and no store: the question is whether building a
// model (what every container does when it opens, and what `strata schema` does with a model
// file) grows linearly with the number of entities. The model has inheritance trees of ten
// entities: a root with five attributes, a uniqueness constraint and an index, related to the
// roots before and after it (a to-one `previous` and its inverse to-many `next`), and nine
// subentities with three attributes of their own. Two steps are timed, each as the median of
// the runs:
//
// - W11: `Schema(descriptions)`, validation and resolution included (target: 10,000 entities in
//   at most 0.5 s);
// - W11b: the same build followed by `serializedRepresentation()`, what `strata schema --json`
//   and a store's metadata write cost.
//
// Every run checks the schema it built, so a fast but wrong build fails the benchmark. A build
// slower than the target fails it too; the quick run (the CI smoke test, on machines of any
// speed) fails only over `quickLimitSeconds`, which still catches a quadratic build (about 23 s
// before issue 12) by a wide margin.

enum LargeSchema {
    /// Entities per inheritance tree (one root and its subentities).
    static let treeSize = 10
    /// W11's target, for `targetEntityCount` entities.
    static let targetSeconds = 0.5
    static let targetEntityCount = 10_000
    /// The limit of a quick run: a check that building stays linear, not a speed figure. CI's
    /// quick run is a debug build, several times slower than release.
    #if DEBUG
        static let quickLimitSeconds = 20.0
    #else
        static let quickLimitSeconds = 2.0
    #endif

    static func name(_ number: Int) -> String { "Entity\(number)" }

    /// `count` entities (a multiple of `treeSize`) in inheritance trees of `treeSize`.
    static func descriptions(count: Int) -> [EntityDescription] {
        let roots = count / treeSize
        return (0..<count).map { number in
            let tree = number / treeSize
            guard number % treeSize == 0 else {
                return EntityDescription(
                    name: name(number), superentity: name(tree * treeSize),
                    attributes: [
                        AttributeDescription(name: "detail", type: .string, defaultValue: .string("")),
                        AttributeDescription(name: "level", type: .integer16, defaultValue: .integer(0)),
                        AttributeDescription(name: "note", type: .string, isOptional: true),
                    ])
            }
            var relationships: [RelationshipDescription] = []
            if tree > 0 {
                relationships.append(
                    RelationshipDescription(name: "previous", destination: name((tree - 1) * treeSize), inverse: "next")
                )
            }
            if tree < roots - 1 {
                relationships.append(
                    RelationshipDescription(
                        name: "next", destination: name((tree + 1) * treeSize), inverse: "previous", isToMany: true))
            }
            return EntityDescription(
                name: name(number),
                attributes: [
                    AttributeDescription(name: "name", type: .string, defaultValue: .string("")),
                    AttributeDescription(name: "amount", type: .integer64, defaultValue: .integer(0), isIndexed: true),
                    AttributeDescription(name: "score", type: .double, defaultValue: .double(0)),
                    AttributeDescription(name: "created", type: .date, isOptional: true),
                    AttributeDescription(name: "flag", type: .boolean, defaultValue: .boolean(false)),
                ],
                relationships: relationships,
                uniquenessConstraints: [["name"]])
        }
    }

    /// Checks what a build must hold, so that a fast but wrong build fails the benchmark.
    static func check(_ schema: Schema, count: Int) throws {
        try expect(schema.entities.count, count, "W11's entities")
        guard let root = schema.entity(named: name(treeSize)), let leaf = schema.entity(named: name(2 * treeSize - 1))
        else { throw BenchmarkError("W11's schema lacks \(name(treeSize)) or \(name(2 * treeSize - 1))") }
        try expect(root.kindNames.count, treeSize, "W11's kinds of a root")
        try expect(root.subentityNames.count, treeSize - 1, "W11's subentities of a root")
        try expect(root.relationship(named: "previous")?.inverseName ?? "", "next", "W11's inverse of previous")
        try expect(leaf.attributes.count, 8, "W11's attributes of a subentity, inherited ones included")
        try expect(leaf.superentity?.name ?? "", root.name, "W11's parent of a subentity")
    }
}

/// Runs W11 and W11b with `targetEntityCount` entities and returns their Markdown table; throws
/// when W11's median is over `limit` seconds.
func runSchemaWorkload(runs: Int, limit: Double) throws -> String {
    let count = LargeSchema.targetEntityCount
    let descriptions = LargeSchema.descriptions(count: count)
    var builds: [Double] = []
    var serializations: [Double] = []
    var serializedBytes = 0
    for run in 0...runs {  // the first round is the warm-up
        var built: Schema?
        let build = try measure { built = try Schema(descriptions) }
        guard let schema = built else { throw BenchmarkError("W11 built no schema") }
        try LargeSchema.check(schema, count: count)
        let buildAndSerialize = try measure {
            serializedBytes = try Schema(descriptions).serializedRepresentation().count
        }
        if serializedBytes == 0 { throw BenchmarkError("W11b serialized nothing") }
        if run > 0 {
            builds.append(build.seconds)
            serializations.append(buildAndSerialize.seconds)
        }
    }
    let build = median(builds)
    if build > limit {
        throw BenchmarkError(
            "W11 built \(count) entities in \(String(format: "%.3f", build)) s, over its limit of \(limit) s "
                + "(target: \(LargeSchema.targetSeconds) s); is schema building quadratic again?")
    }
    let met = build <= LargeSchema.targetSeconds
    func time(_ seconds: Double) -> String { String(format: "%.3f", seconds) }
    return """
        W11: building a schema of \(count) entities (inheritance trees of \(LargeSchema.treeSize): roots with 5 \
        attributes, related in a chain; subentities with 3); median of \(runs) run(s) after a warm-up. Target: the \
        build takes at most \(LargeSchema.targetSeconds) s.

        | W11 step | Strata (s) | target |
        | --- | --- | --- |
        | W11: build and validate the schema | \(time(build)) | ≤ \(LargeSchema.targetSeconds) s \(met ? "(met)" : "(missed)") |
        | W11b: build it and serialize it (\(serializedBytes / 1_000_000) MB of JSON) | \(time(median(serializations))) | – |
        """
}
