import Foundation

/// Turns the values Core Data stores for transformable attributes into JSON that Swift's
/// `Codable` reads with `JSONDecoder`'s default strategies.
///
/// Core Data's default transformer (`NSSecureUnarchiveFromData`) stores an `NSKeyedArchiver`
/// archive; other transformers store a plain property list. Property-list objects translate
/// as `JSONEncoder` would have written their Swift counterparts: arrays and sets as arrays,
/// dictionaries with string keys as objects, numbers and Booleans as themselves, dates as
/// seconds since 2001, data as Base64, UUIDs and URLs as strings. Any other class (a colour,
/// a custom `NSCoding` object) has no JSON form: the error names it.
enum KeyedArchive {
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The JSON form of a keyed archive or a binary property list.
    static func jsonData(from data: Data) throws(Unreadable) -> Data {
        let value: PropertyListValue
        do {
            value = try BinaryPropertyList.value(of: data)
        } catch {
            throw Unreadable(description: "it is not a keyed archive or property list (\(error))")
        }
        let json: Any
        if case .dictionary(let root) = value, case .string("NSKeyedArchiver") = root["$archiver"] {
            guard case .array(let objects) = root["$objects"], case .dictionary(let top) = root["$top"],
                let first = top["root"] ?? top.values.first
            else {
                throw Unreadable(description: "its keyed archive has no $objects or $top")
            }
            var unarchiver = Unarchiver(objects: objects, bytesLeft: BinaryPropertyList.maximumExpandedBytes(forInputOf: data.count))
            json = try unarchiver.json(first)
        } else {
            var depth = 0
            json = try plainJSON(value, depth: &depth)
        }
        do {
            return try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed, .sortedKeys])
        } catch {
            throw Unreadable(description: "its value has no JSON form (\(error.localizedDescription))")
        }
    }

    /// A property list that is not an archive (or a plain value inside one). `depth` counts
    /// the containers around it: the parser limits nesting, and so does this.
    private static func plainJSON(_ value: PropertyListValue, depth: inout Int) throws(Unreadable) -> Any {
        depth += 1
        defer { depth -= 1 }
        guard depth <= BinaryPropertyList.maximumDepth else {
            throw Unreadable(description: "it nests deeper than \(BinaryPropertyList.maximumDepth) levels")
        }
        switch value {
        case .null: return NSNull()
        case .boolean(let flag): return flag
        case .integer(let number): return number
        case .unsignedInteger(let number): return number
        case .real(let number): return try finite(number)
        case .date(let seconds): return try finite(seconds)
        case .data(let bytes): return bytes.base64EncodedString()
        case .string(let text): return text
        case .uid: throw Unreadable(description: "it holds an object reference outside a keyed archive")
        case .array(let elements):
            var result: [Any] = []
            for element in elements { result.append(try plainJSON(element, depth: &depth)) }
            return result
        case .dictionary(let entries):
            var result: [String: Any] = [:]
            for (key, element) in entries { result[key] = try plainJSON(element, depth: &depth) }
            return result
        }
    }

    private static func finite(_ number: Double) throws(Unreadable) -> Double {
        guard number.isFinite else { throw Unreadable(description: "it holds \(number), which JSON cannot") }
        return number
    }

    /// Follows an archive's object references.
    private struct Unarchiver {
        let objects: [PropertyListValue]
        var visiting: Set<Int> = []
        /// Objects may be shared: an archive of a few hundred bytes can expand exponentially.
        var valuesLeft = BinaryPropertyList.maximumValueCount
        var bytesLeft: Int

        init(objects: [PropertyListValue], bytesLeft: Int) {
            self.objects = objects
            self.bytesLeft = bytesLeft
        }

        mutating func json(_ reference: PropertyListValue) throws(Unreadable) -> Any {
            let result = try expand(reference)
            // What references repeat counts each time it is repeated.
            if let text = result as? String { bytesLeft -= text.utf8.count }
            guard bytesLeft >= 0 else { throw Unreadable(description: "its archive expands to too many bytes (shared objects repeated)") }
            return result
        }

        private mutating func expand(_ reference: PropertyListValue) throws(Unreadable) -> Any {
            valuesLeft -= 1
            guard valuesLeft >= 0 else { throw Unreadable(description: "its archive expands to more than \(BinaryPropertyList.maximumValueCount) objects") }
            guard visiting.count < BinaryPropertyList.maximumDepth else {
                throw Unreadable(description: "its archive nests deeper than \(BinaryPropertyList.maximumDepth) levels")
            }
            var depth = visiting.count
            guard case .uid(let index) = reference else { return try KeyedArchive.plainJSON(reference, depth: &depth) }
            guard objects.indices.contains(index) else { throw Unreadable(description: "its archive refers to object \(index), which it lacks") }
            guard visiting.insert(index).inserted else { throw Unreadable(description: "its archive holds an object that contains itself") }
            defer { visiting.remove(index) }
            let object = objects[index]
            guard case .dictionary(let fields) = object else {
                if case .string("$null") = object { return NSNull() }
                bytesLeft -= Self.byteSize(of: object)
                guard bytesLeft >= 0 else { throw Unreadable(description: "its archive expands to too many bytes (shared objects repeated)") }
                return try KeyedArchive.plainJSON(object, depth: &depth)
            }
            let className = self.className(of: fields)
            switch className {
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                guard case .array(let members) = fields["NS.objects"] else { throw missing("NS.objects", className) }
                var result: [Any] = []
                for member in members { result.append(try json(member)) }
                return result
            case "NSDictionary", "NSMutableDictionary":
                guard case .array(let keys) = fields["NS.keys"], case .array(let values) = fields["NS.objects"],
                    keys.count == values.count
                else { throw missing("NS.keys and NS.objects", className) }
                var result: [String: Any] = [:]
                for (key, value) in zip(keys, values) {
                    guard let name = try json(key) as? String else {
                        throw Unreadable(description: "it holds a dictionary whose keys are not strings, which JSON cannot")
                    }
                    result[name] = try json(value)
                }
                return result
            case "NSString", "NSMutableString":
                guard let text = try fields["NS.string"].map({ (value) throws(Unreadable) in try json(value) }) as? String else {
                    throw missing("NS.string", className)
                }
                return text
            case "NSData", "NSMutableData":
                guard case .data(let bytes) = fields["NS.data"] else { throw missing("NS.data", className) }
                return bytes.base64EncodedString()
            case "NSDate":
                switch fields["NS.time"] {
                case .real(let seconds): return try KeyedArchive.finite(seconds)
                case .integer(let seconds): return seconds
                default: throw missing("NS.time", className)
                }
            case "NSUUID":
                guard case .data(let bytes) = fields["NS.uuidbytes"], bytes.count == 16 else { throw missing("NS.uuidbytes", className) }
                return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString
            case "NSURL":
                guard let relative = try fields["NS.relative"].map({ (value) throws(Unreadable) in try json(value) }) as? String else {
                    throw missing("NS.relative", className)
                }
                let base = try fields["NS.base"].map { (value) throws(Unreadable) in try json(value) } as? String
                guard let url = URL(string: relative, relativeTo: base.flatMap { URL(string: $0) }) else {
                    throw Unreadable(description: "it holds the URL \(relative), which is not valid")
                }
                return url.absoluteString
            case "NSNull":
                return NSNull()
            default:
                throw Unreadable(
                    description: "it holds an archived \(className ?? "object of no class"), which has no JSON form")
            }
        }

        /// The bytes of data and text in a plain value (its nesting is bounded by the parser).
        private static func byteSize(of value: PropertyListValue) -> Int {
            switch value {
            case .data(let bytes): bytes.count
            case .string(let text): text.utf8.count
            case .array(let elements): elements.reduce(0) { $0 + byteSize(of: $1) }
            case .dictionary(let entries): entries.reduce(0) { $0 + $1.key.utf8.count + byteSize(of: $1.value) }
            default: 0
            }
        }

        private func className(of fields: [String: PropertyListValue]) -> String? {
            guard case .uid(let index) = fields["$class"], objects.indices.contains(index),
                case .dictionary(let description) = objects[index], case .string(let name) = description["$classname"]
            else { return nil }
            return name
        }

        private func missing(_ field: String, _ className: String?) -> Unreadable {
            Unreadable(description: "its archived \(className ?? "object") has no \(field)")
        }
    }
}
