import Foundation
import Strata

// MARK: - The grammar

/// The model as the grammar sees it: attribute names and kinds, and relationships.
enum Kind: CaseIterable {
    case integer, double, decimal, string, date, boolean

    var isNumeric: Bool { self == .integer || self == .double || self == .decimal }
}

struct EntitySpec {
    var name: String
    var attributes: [(name: String, kind: Kind)]
    var toOne: [(name: String, entity: String)]
    var toMany: [(name: String, entity: String)]
}

private let entitySpecs: [String: EntitySpec] = [
    "Item": EntitySpec(
        name: "Item",
        attributes: [
            ("key", .integer), ("quantity", .integer), ("small", .integer), ("ratio", .double), ("weight", .double),
            ("amount", .decimal), ("price", .decimal), ("name", .string), ("note", .string), ("date", .date),
            ("due", .date), ("flag", .boolean), ("maybe", .boolean),
        ],
        toOne: [("owner", "Owner")], toMany: [("parts", "Part"), ("tags", "Tag")]),
    "Owner": EntitySpec(
        name: "Owner",
        attributes: [
            ("key", .integer), ("name", .string), ("nickname", .string), ("rank", .integer), ("joined", .date),
        ],
        toOne: [], toMany: [("items", "Item")]),
    "Part": EntitySpec(
        name: "Part",
        attributes: [
            ("key", .integer), ("size", .integer), ("level", .integer), ("score", .double), ("cost", .decimal),
            ("label", .string), ("made", .date),
        ],
        toOne: [("item", "Item")], toMany: []),
    "Tag": EntitySpec(
        name: "Tag", attributes: [("key", .integer), ("name", .string), ("boost", .double)], toOne: [],
        toMany: [("items", "Item")]),
]

private func spec(_ name: String) -> EntitySpec {
    entitySpecs[name] ?? EntitySpec(name: name, attributes: [("key", .integer)], toOne: [], toMany: [])
}

/// Builds one predicate, choice by choice.
struct PredicateGrammar<Source: ChoiceSource> {
    var source: Source
    let options: GeneratedPredicate.Options
    var arguments: [any PredicateArgument] = []
    /// Where key paths may start: the fetched object (no prefix) and the variables of the
    /// enclosing subqueries (`$v.`), innermost last.
    var scopes: [(prefix: String, entity: String)] = []

    init(source: Source, options: GeneratedPredicate.Options) {
        self.source = source
        self.options = options
    }

    mutating func generate() -> GeneratedPredicate {
        let root: DifferentialModel.Root = choose(5) == 4 ? .owner : .item
        scopes = [("", root.rawValue)]
        let format = predicate(depth: options.maximumDepth)
        return GeneratedPredicate(root, format: format, arguments: arguments)
    }

    // MARK: Choosing

    mutating func choose(_ count: Int) -> Int { source.choose(count) }

    mutating func pick<T>(_ values: [T]) -> T { values[choose(values.count)] }

    /// `true` with roughly the given percentage.
    mutating func chance(_ percent: Int) -> Bool { choose(100) < percent }

    // MARK: Predicates

    mutating func predicate(depth: Int) -> String {
        // Choice 0 is a comparison, so that running out of bytes ends the predicate.
        let choice = depth <= 0 ? 0 : choose(12)
        switch choice {
        case 0...5: return comparison(depth: depth)
        case 6...9:
            let left = predicate(depth: depth - 1)
            let connective = choice <= 7 ? pick([" AND ", " && ", " and "]) : pick([" OR ", " || ", " or "])
            return "(" + left + connective + predicate(depth: depth - 1) + ")"
        case 10: return pick(["NOT ", "!", "not "]) + "(" + predicate(depth: depth - 1) + ")"
        default: return pick(["TRUEPREDICATE", "FALSEPREDICATE", "(TRUEPREDICATE)", "NOT FALSEPREDICATE"])
        }
    }

    mutating func comparison(depth: Int) -> String {
        switch choose(40) {
        case 0...11: return attributeComparison(scope: pickScope())
        case 12, 13: return attributeVersusAttribute(scope: pickScope())
        case 14...19: return aggregateComparison(scope: pickScope())
        case 20...25: return quantified(scope: pickScope())
        case 26...29: return subquery(depth: depth)
        case 30, 31: return toOneNilTest(scope: pickScope())
        case 32, 33: return reversedComparison(scope: pickScope())
        case 34: return stringInString(scope: pickScope())
        case 35, 36, 37: return aggregateVersusAttribute(scope: pickScope())
        default: return malformed(scope: pickScope())
        }
    }

    mutating func pickScope() -> (prefix: String, entity: String) {
        // Mostly the innermost scope.
        if scopes.count > 1 && chance(70) { return scopes[scopes.count - 1] }
        return pick(scopes)
    }

    /// A key path from a scope to an attribute, through up to two to-one relationships.
    mutating func attributePath(from scope: (prefix: String, entity: String), kind wanted: Kind? = nil)
        -> (path: String, kind: Kind)
    {
        var entity = spec(scope.entity)
        var path = scope.prefix
        var hops = 0
        while hops < 2, !entity.toOne.isEmpty, chance(20) {
            let step = pick(entity.toOne)
            path += step.name + "."
            entity = spec(step.entity)
            hops += 1
        }
        var candidates = entity.attributes
        if let wanted {
            let matching = candidates.filter { $0.kind == wanted }
            if !matching.isEmpty { candidates = matching }
        }
        let attribute = pick(candidates)
        return (path + attribute.name, attribute.kind)
    }

    /// A to-many relationship reachable from a scope (through at most one to-one), with its
    /// member entity.
    mutating func collectionPath(from scope: (prefix: String, entity: String)) -> (path: String, member: String)? {
        var entity = spec(scope.entity)
        var path = scope.prefix
        if !entity.toOne.isEmpty, entity.toMany.isEmpty || chance(15) {
            let step = pick(entity.toOne)
            path += step.name + "."
            entity = spec(step.entity)
        }
        guard !entity.toMany.isEmpty else { return nil }
        let relationship = pick(entity.toMany)
        return (path + relationship.name, relationship.entity)
    }

    /// A key path, sometimes passed as a `%K` argument (only without variables).
    mutating func key(_ path: String) -> String {
        if path.hasPrefix("$") { return path }
        switch choose(20) {
        case 0, 1:
            arguments.append(path)
            return "%K"
        case 2: return "SELF." + path
        default: return path
        }
    }

    mutating func textOptions() -> String { pick(["", "", "", "[c]", "[d]", "[cd]", "[dc]", "[cn]"]) }

    mutating func orderingOperator() -> String {
        pick(["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"])
    }

    // MARK: Comparisons

    mutating func attributeComparison(scope: (prefix: String, entity: String)) -> String {
        let (path, kind) = attributePath(from: scope)
        return attributeTest(key(path), kind: kind)
    }

    /// A test of one attribute (or member attribute, under a quantifier).
    mutating func attributeTest(_ key: String, kind: Kind) -> String {
        switch choose(10) {
        case 0...3:
            let folding = kind == .string ? textOptions() : ""
            return "\(key) \(orderingOperator())\(folding) \(constant(near: kind))"
        case 4:
            return "\(key) \(pick(["==", "!=", "="])) \(nilConstant())"
        case 5:
            return "\(key) BETWEEN \(list(of: kind, count: chance(97) ? 2 : pick([0, 1, 3])))"
        case 6:
            let folding = kind == .string ? textOptions() : ""
            return "\(key) IN\(folding) \(list(of: kind, count: choose(5)))"
        default:
            if kind == .string || chance(5) { return stringTest(key) }
            return "\(key) \(orderingOperator()) \(constant(near: kind))"
        }
    }

    mutating func stringTest(_ key: String) -> String {
        let folding = textOptions()
        switch choose(6) {
        case 0: return "\(key) CONTAINS\(folding) \(stringConstant(from: Pools.fragments))"
        case 1: return "\(key) BEGINSWITH\(folding) \(stringConstant(from: Pools.fragments))"
        case 2: return "\(key) ENDSWITH\(folding) \(stringConstant(from: Pools.fragments))"
        case 3: return "\(key) LIKE\(folding) \(stringConstant(from: Pools.likePatterns))"
        case 4: return "\(key) MATCHES\(folding) \(stringConstant(from: Pools.regularExpressions))"
        default: return "\(key) \(pick(["==", "!="]))\(folding) \(stringConstant(from: Pools.strings))"
        }
    }

    mutating func attributeVersusAttribute(scope: (prefix: String, entity: String)) -> String {
        let (left, kind) = attributePath(from: scope)
        // Usually the same kind, now and then another (numbers mix; other pairs are errors).
        let otherKind: Kind = chance(75) ? kind : pick(Kind.allCases)
        let (right, _) = attributePath(from: pickScope(), kind: otherKind)
        if kind == .string && chance(40) {
            let folding = textOptions()
            let op = pick(["CONTAINS", "BEGINSWITH", "ENDSWITH", "==", "<", ">="])
            return "\(key(left)) \(op)\(folding) \(right)"
        }
        return "\(key(left)) \(orderingOperator()) \(right)"
    }

    mutating func reversedComparison(scope: (prefix: String, entity: String)) -> String {
        let (path, kind) = attributePath(from: scope)
        return "\(constant(near: kind)) \(orderingOperator()) \(key(path))"
    }

    mutating func stringInString(scope: (prefix: String, entity: String)) -> String {
        let (path, _) = attributePath(from: scope, kind: .string)
        // In this order: `key` and `stringConstant` append their arguments as the string reads.
        let left = key(path) + " IN" + textOptions()
        return left + " " + stringConstant(from: Pools.strings.map { $0 + " " } + Pools.sentences)
    }

    mutating func toOneNilTest(scope: (prefix: String, entity: String)) -> String {
        let entity = spec(scope.entity)
        guard let step = entity.toOne.isEmpty ? nil : pick(entity.toOne) else {
            return "\(scope.prefix.isEmpty ? "SELF" : String(scope.prefix.dropLast())) != nil"
        }
        var path = scope.prefix + step.name
        if chance(30), let next = spec(step.entity).toOne.first { path += "." + next.name }
        return "\(path) \(pick(["==", "!="])) \(nilConstant())"
    }

    mutating func aggregateComparison(scope: (prefix: String, entity: String)) -> String {
        guard let (collection, member) = collectionPath(from: scope) else { return attributeComparison(scope: scope) }
        let (aggregate, kind) = aggregateExpression(collection: collection, member: member)
        switch choose(8) {
        case 0: return "\(aggregate) \(pick(["==", "!="])) \(nilConstant())"
        case 1: return "\(aggregate) BETWEEN \(list(of: kind, count: 2))"
        case 2: return "\(aggregate) IN \(list(of: kind, count: choose(4)))"
        default: return "\(aggregate) \(orderingOperator()) \(constant(near: kind))"
        }
    }

    mutating func aggregateVersusAttribute(scope: (prefix: String, entity: String)) -> String {
        guard let (collection, member) = collectionPath(from: scope) else { return attributeComparison(scope: scope) }
        let (aggregate, kind) = aggregateExpression(collection: collection, member: member)
        let (path, _) = attributePath(from: pickScope(), kind: kind == .integer && chance(50) ? .double : kind)
        return chance(50) ? "\(aggregate) \(orderingOperator()) \(path)" : "\(path) \(orderingOperator()) \(aggregate)"
    }

    /// `collection.@count` or `collection.@op.attribute`, and the kind of its value.
    mutating func aggregateExpression(collection: String, member: String) -> (String, Kind) {
        let memberSpec = spec(member)
        switch choose(5) {
        case 0:
            return ("\(collection).@count", .integer)
        case 1, 2:
            let op = pick(["@sum", "@avg"])
            var numeric = memberSpec.attributes.filter { $0.kind.isNumeric }
            if numeric.isEmpty || chance(3) { numeric = memberSpec.attributes }  // a type error now and then
            let attribute = pick(numeric)
            let kind: Kind = op == "@avg" && attribute.kind == .integer ? .double : attribute.kind
            return ("\(collection).\(op).\(throughToOne(memberSpec) ?? "")\(attribute.name)", kind)
        default:
            let op = pick(["@min", "@max"])
            let attribute = pick(memberSpec.attributes)
            return ("\(collection).\(op).\(attribute.name)", attribute.kind)
        }
    }

    /// Now and then a to-one step after a collection operator (`parts.@sum.item.quantity`).
    mutating func throughToOne(_ member: EntitySpec) -> String? {
        guard !member.toOne.isEmpty, chance(5) else { return nil }
        return pick(member.toOne).name + "."
    }

    mutating func quantified(scope: (prefix: String, entity: String)) -> String {
        guard let (collection, member) = collectionPath(from: scope) else { return attributeComparison(scope: scope) }
        let modifier = pick(["ANY ", "SOME ", "ALL ", "NONE ", "", "any ", "all "])
        let (path, kind) = attributePath(from: ("", member))
        return modifier + attributeTest(collection + "." + path, kind: kind)
    }

    mutating func subquery(depth: Int) -> String {
        let scope = pickScope()
        guard depth > 0, scopes.count < 3, let (collection, member) = collectionPath(from: scope) else {
            return attributeComparison(scope: scope)
        }
        let variable = pick(["$p", "$x", "$m", "$item", "$v\(scopes.count)"])
        scopes.append((variable + ".", member))
        let body = predicate(depth: depth - 1)
        scopes.removeLast()
        let count = chance(80) ? "\(choose(4))" : constant(near: .integer)
        return "SUBQUERY(\(collection), \(variable), \(body)).@count \(orderingOperator()) \(count)"
    }

    /// An unknown key, an operator on the wrong kind of key path, or a bad regular expression:
    /// both sides must report the same error.
    mutating func malformed(scope: (prefix: String, entity: String)) -> String {
        let entity = spec(scope.entity)
        switch choose(7) {
        case 0: return "\(scope.prefix)nmae == 'x'"
        case 1: return "\(entity.toMany.first.map { scope.prefix + $0.name } ?? "key") > 1"
        case 2: return "\(scope.prefix)\(pick(entity.attributes).name).extra == 1"
        case 3: return "\(scope.prefix)key MATCHES '('"
        case 4: return "\(attributePath(from: scope, kind: .string).path) > \(constant(of: .integer))"
        case 5: return "\(attributePath(from: scope, kind: .date).path) CONTAINS 'a'"
        default: return "ANY \(scope.prefix)key == 1"
        }
    }

    // MARK: Constants

    /// A constant of the kind, or (one time in ten) of another kind it may or may not be
    /// compared with.
    mutating func constant(near kind: Kind) -> String {
        guard chance(10) else { return constant(of: kind) }
        switch kind {
        case .integer, .double, .decimal: return constant(of: pick([.integer, .double, .decimal, .boolean, .string]))
        case .date: return constant(of: pick([.integer, .double, .string]))
        case .boolean: return constant(of: pick([.integer, .string]))
        case .string: return constant(of: pick([.integer, .date]))
        }
    }

    mutating func constant(of kind: Kind) -> String {
        switch kind {
        case .integer: return integerConstant()
        case .double: return doubleConstant()
        case .decimal: return argument(decimal())
        case .string: return stringConstant(from: Pools.strings + Pools.fragments)
        case .date:
            let seconds = pick(Pools.dates)
            if chance(30) { return "CAST(\(seconds), \(pick(["'NSDate'", "\"NSDate\""])))" }
            return argument(Date(timeIntervalSinceReferenceDate: seconds))
        case .boolean:
            let flag = chance(50)
            if chance(30) { return argument(flag) }
            return flag ? pick(["YES", "TRUE", "true"]) : pick(["NO", "FALSE", "false"])
        }
    }

    mutating func integerConstant() -> String {
        let value = pick(Pools.integers)
        switch choose(6) {
        case 0: return argument(value)
        case 1: return argument(Int(value))
        case 2:
            arguments.append(Int(value))
            return pick(["%d", "%ld", "%lld", "%i"])
        default: return "\(value)"
        }
    }

    mutating func doubleConstant() -> String {
        let value = double()
        if value.isFinite, !(value == 0 && value.sign == .minus), chance(50) { return "\(value)" }
        if chance(20) {
            arguments.append(value)
            return pick(["%f", "%lf", "%g"])
        }
        return argument(value)
    }

    mutating func double() -> Double {
        if options.includesNaNAndNegativeZero, chance(8) { return pick([.nan, -0.0, -Double.nan]) }
        return pick(Pools.doubles)
    }

    mutating func decimal() -> Decimal {
        if options.includesNaNAndNegativeZero, chance(5) { return .nan }
        return Decimal(string: pick(Pools.decimals), locale: Locale(identifier: "en_US_POSIX")) ?? 0
    }

    mutating func stringConstant(from pool: [String]) -> String {
        var text = pick(pool)
        if options.includesNULCharacters, chance(10) {
            text = pick(["\0", text + "\0", "\0" + text, String(text.prefix(1)) + "\0" + String(text.dropFirst())])
        }
        if chance(35) { return argument(text) }
        return quoted(text)
    }

    /// A string literal with every character that needs it escaped.
    mutating func quoted(_ text: String) -> String {
        let quote: Character = chance(70) ? "'" : "\""
        var result = String(quote)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "%": result += "%%"
            case "\0": result += "\\0"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "'" where quote == "'": result += "\\'"
            case "\"" where quote == "\"": result += "\\\""
            default:
                if scalar.value > 0x7F && chance(10) {
                    // \uXXXX, with a surrogate pair beyond the Basic Multilingual Plane.
                    result += String(scalar).utf16.map { String(format: "\\u%04X", $0) }.joined()
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        result.append(quote)
        return result
    }

    mutating func nilConstant() -> String {
        switch choose(5) {
        case 0: return argument(Int?.none)
        case 1: return "NULL"
        case 2: return "NIL"
        default: return "nil"
        }
    }

    /// A list for `IN` or `BETWEEN`: a literal (`{1, 2}`) or an array argument.
    mutating func list(of kind: Kind, count: Int) -> String {
        if chance(40) {
            var values: [AttributeValue] = []
            for _ in 0..<count { values.append(attributeValue(near: kind)) }
            return argument(values)
        }
        var elements: [String] = []
        for _ in 0..<count { elements.append(chance(10) ? nilConstant() : constant(near: kind)) }
        return "{" + elements.joined(separator: ", ") + "}"
    }

    mutating func attributeValue(near kind: Kind) -> AttributeValue {
        let chosen = chance(15) ? pick(Kind.allCases) : kind
        switch chosen {
        case .integer: return .integer(pick(Pools.integers))
        case .double: return .double(double())
        case .decimal: return .decimal(decimal())
        case .string: return .string(pick(Pools.strings + Pools.fragments))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: pick(Pools.dates)))
        case .boolean: return .boolean(chance(50))
        }
    }

    mutating func argument(_ value: any PredicateArgument) -> String {
        arguments.append(value)
        return "%@"
    }
}

/// The values the grammar picks constants from.
private enum Pools {
    static let integers: [Int64] = [
        0, 1, -1, 2, 3, 5, 7, 42, 100, 1000, .max, .min, .max - 1, 9_007_199_254_740_993, -9_007_199_254_740_993,
        9_007_199_254_740_992, 32_767, -32_768, 2_147_483_647, -2_147_483_648, -5, 200, 13, 4,
    ]
    static let doubles: [Double] = [
        0, 0.5, -0.5, 2.5, 1e308, -1e308, .infinity, -.infinity, 1e-300, 42, 1.0 / 3.0, 2.0 / 3.0,
        9_007_199_254_740_992, 3, 100.5, 0.1, 0.2, 0.3, 0.6, 0.6000000000000001, 0.30000000000000004, 0x1p63, -0x1p63,
        0x1p64, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 1.5, 4, 7,
    ]
    static let decimals: [String] = [
        "0", "1.5", "0.1", "-0.001", "12345678901234567890.123456789", "100", "2.5", "7", "-7",
        "0.333333333333333333333333333333333333", "1e30", "-1e30", "3", "100.5", "99.999", "0.3", "9223372036854775807",
        "9223372036854775808", "-12345678901234567890.5", "0.10", "2e30",
    ]
    static let strings: [String] = [
        "Heat", "heat", "HEAT", "École", "ecole", "e\u{301}cole", "ÉCOLE", "Straße", "STRASSE", "strasse", "ss", "ß",
        "", " ", "naïve", "naive", "🎬 film", "🎬", "x*y", "a?b", "50% off", "it's", "back\\slash", "Ωmega", "ωmega",
        "a9", "a10", "Ronin", "ronin", "drama", "noir", "Noir", "NOIR", "Ann", "ann", "Émile", "emile", "zoë", "Zed",
        "Bo", "bolt", "gear", "écrou", "third", "a", "B", "0", "max", "Annie",
    ]
    static let fragments: [String] = [
        "he", "HE", "at", "é", "e", "E", "\u{301}", "ss", "ß", "%", "*", "?", "🎬", "", "a", "o", "ol", "co", "Ω", "ω",
        "'", "\\", "eat", "É", "ëcrou", "film", " ", "i",
    ]
    static let likePatterns: [String] = [
        "h*", "*at", "?eat", "*a*", "a?", "a??", "*", "", "x\\*y", "*ß*", "e*", "?", "*\\?*", "É*", "*ö*", "??",
        "*e\u{301}*", "a\\", "\\", "**", "*?", "H*T",
    ]
    static let regularExpressions: [String] = [
        "h.*", "[A-Z].*", ".*[0-9].*", "(heat|ronin)", "É.*", ".*ö.*", "[a-z ]*", "e\u{301}.*", ".*", "", "\\w+",
        "(?i)heat", ".", "a\\d+", "[^a-z]*", "(", "[a-", "*a", "ß", "\\p{Lu}.*",
    ]
    static let sentences: [String] = ["Heat and heat", "a9 a10", "École ecole", "drama noir Noir", "🎬 film x*y"]
    static let dates: [Double] = [
        0, 86_400, -86_400, 1e9, -1e9, 3600.5, 0.25, -0.25, 259_200, 0.001, 172_800, 12_345.678, 432_000, 2.5, 0.5, 1.5,
        -5, 5, 9, 10, 345_600,
    ]
}
