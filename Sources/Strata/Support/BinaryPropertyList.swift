import Foundation

/// A value of a binary property list (`bplist00`), read without Foundation's
/// `PropertyListSerialization`, which hides the object references (`UID`s) that keyed archives
/// are made of.
enum PropertyListValue: Equatable {
    case boolean(Bool)
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsignedInteger(UInt64)
    case real(Double)
    /// Seconds since 2001-01-01 (Foundation's reference date).
    case date(Double)
    case data(Data)
    case string(String)
    /// An object reference of a keyed archive: an index into its `$objects`.
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
    case null
}

/// Reads binary property lists, refusing malformed ones with a message (never trapping, and
/// never looping on a list whose objects refer to each other).
///
/// The layout: the `bplist00` header; objects, each a marker byte (high nibble: type, low
/// nibble: size or `0xF` for "an integer object with the size follows"); a table of object
/// offsets; and a 32-byte trailer with the offset and reference sizes, the object count, the
/// top object and the table's offset.
struct BinaryPropertyList {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let offsets: [Int]
    private let top: Int

    /// The most values one list may expand to.
    static let maximumValueCount = 1_000_000
    /// The deepest nesting a list may have (deeper ones would exhaust the stack).
    static let maximumDepth = 512
    /// The most bytes of data and text one list of `size` bytes may expand to: shared objects
    /// are copied once per reference.
    static func maximumExpandedBytes(forInputOf size: Int) -> Int { 64 << 20 + 4 * size }

    /// What expanding a list may still use, and the objects on the current path.
    struct Expansion {
        var visiting: Set<Int> = []
        var valuesLeft = BinaryPropertyList.maximumValueCount
        var bytesLeft: Int

        /// Counts one more value of `bytes` bytes, throwing past a limit.
        mutating func use(bytes: Int = 0) throws(Malformed) {
            valuesLeft -= 1
            bytesLeft -= bytes
            guard valuesLeft >= 0 else { throw Malformed(description: "more than \(BinaryPropertyList.maximumValueCount) values") }
            guard bytesLeft >= 0 else { throw Malformed(description: "it expands to too many bytes (shared objects repeated)") }
        }
    }

    /// The top object of the binary property list in `data`.
    static func value(of data: Data) throws(Malformed) -> PropertyListValue {
        let list = try BinaryPropertyList(data)
        // Objects may be shared: a list of a few hundred bytes can expand exponentially.
        var expansion = Expansion(bytesLeft: maximumExpandedBytes(forInputOf: data.count))
        return try list.object(list.top, &expansion)
    }

    private init(_ data: Data) throws(Malformed) {
        bytes = Array(data)
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw Malformed(description: "not a binary property list")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Malformed(description: "bad offset or reference size in the trailer")
        }
        let count = Self.integer(bytes[(trailer + 8)..<(trailer + 16)])
        let topObject = Self.integer(bytes[(trailer + 16)..<(trailer + 24)])
        let tableOffset = Self.integer(bytes[(trailer + 24)..<(trailer + 32)])
        guard count > 0, count <= UInt64(trailer), topObject < count, tableOffset >= 8,
            tableOffset <= UInt64(trailer), UInt64(trailer) - tableOffset >= count * UInt64(offsetSize)
        else {
            throw Malformed(description: "the trailer points outside the list")
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let start = Int(tableOffset) + index * offsetSize
            let offset = Self.integer(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < tableOffset else {
                throw Malformed(description: "object \(index) lies outside the object area")
            }
            offsets.append(Int(offset))
        }
        self.offsets = offsets
        top = Int(topObject)
    }

    /// A big-endian unsigned integer.
    private static func integer(_ slice: ArraySlice<UInt8>) -> UInt64 {
        slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `count` bytes at `start`, checked against the object area.
    private func slice(_ start: Int, _ count: Int) throws(Malformed) -> ArraySlice<UInt8> {
        guard count >= 0, start >= 0, start <= bytes.count - 32, count <= bytes.count - 32 - start else {
            throw Malformed(description: "an object runs past the end of the list")
        }
        return bytes[start..<(start + count)]
    }

    /// The length in a marker's low nibble, or in the integer object after it; and where the
    /// contents start.
    private func length(_ nibble: UInt8, after position: Int) throws(Malformed) -> (length: Int, start: Int) {
        guard nibble == 0xF else { return (Int(nibble), position + 1) }
        let marker = try slice(position + 1, 1).first ?? 0
        guard marker >> 4 == 0x1, marker & 0xF <= 3 else { throw Malformed(description: "a bad length") }
        let size = 1 << Int(marker & 0xF)
        let value = Self.integer(try slice(position + 2, size))
        guard value <= UInt64(bytes.count) else { throw Malformed(description: "a length beyond the list") }
        return (Int(value), position + 2 + size)
    }

    private func reference(at position: Int) throws(Malformed) -> Int {
        let value = Self.integer(try slice(position, referenceSize))
        guard value < UInt64(offsets.count) else { throw Malformed(description: "a reference to no object") }
        return Int(value)
    }

    private func object(_ index: Int, _ expansion: inout Expansion) throws(Malformed) -> PropertyListValue {
        try expansion.use()
        guard expansion.visiting.count < Self.maximumDepth else {
            throw Malformed(description: "it nests deeper than \(Self.maximumDepth) levels")
        }
        guard expansion.visiting.insert(index).inserted else { throw Malformed(description: "object \(index) contains itself") }
        defer { expansion.visiting.remove(index) }
        let position = offsets[index]
        let marker = try slice(position, 1).first ?? 0
        let nibble = marker & 0xF
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .boolean(false)
            case 0x09: return .boolean(true)
            default: throw Malformed(description: "unknown marker \(marker)")
            }
        case 0x1:
            let size = 1 << Int(nibble)
            guard size <= 16 else { throw Malformed(description: "an integer of \(size) bytes") }
            let raw = try slice(position + 1, size)
            let low = Self.integer(raw.suffix(8))
            guard size == 16 else { return .integer(Int64(bitPattern: low)) }  // 8-byte ones are signed
            // 16-byte integers hold unsigned 64-bit values (those above Int64.max).
            guard Self.integer(raw.prefix(8)) == 0 else { throw Malformed(description: "an integer beyond 64 bits") }
            return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low)
        case 0x2:
            switch nibble {
            case 2: return .real(Double(Float(bitPattern: UInt32(Self.integer(try slice(position + 1, 4))))))
            case 3: return .real(Double(bitPattern: Self.integer(try slice(position + 1, 8))))
            default: throw Malformed(description: "a real of \(1 << Int(nibble)) bytes")
            }
        case 0x3:
            guard marker == 0x33 else { throw Malformed(description: "unknown marker \(marker)") }
            return .date(Double(bitPattern: Self.integer(try slice(position + 1, 8))))
        case 0x4:
            let (count, start) = try length(nibble, after: position)
            try expansion.use(bytes: count)
            return .data(Data(try slice(start, count)))
        case 0x5:
            let (count, start) = try length(nibble, after: position)
            try expansion.use(bytes: count)
            return .string(String(decoding: try slice(start, count), as: UTF8.self))
        case 0x6:
            let (count, start) = try length(nibble, after: position)
            try expansion.use(bytes: count * 2)
            let raw = try slice(start, count * 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var iterator = raw.makeIterator()
            while let high = iterator.next(), let low = iterator.next() { units.append(UInt16(high) << 8 | UInt16(low)) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            return .uid(Int(clamping: Self.integer(try slice(position + 1, Int(nibble) + 1))))
        case 0xA, 0xC:
            let (count, start) = try length(nibble, after: position)
            _ = try slice(start, count * referenceSize)
            var elements: [PropertyListValue] = []
            for element in 0..<count {
                elements.append(try object(try reference(at: start + element * referenceSize), &expansion))
            }
            return .array(elements)
        case 0xD:
            let (count, start) = try length(nibble, after: position)
            _ = try slice(start, 2 * count * referenceSize)
            var dictionary: [String: PropertyListValue] = [:]
            for entry in 0..<count {
                guard case .string(let key) = try object(try reference(at: start + entry * referenceSize), &expansion) else {
                    throw Malformed(description: "a dictionary key that is not a string")
                }
                dictionary[key] = try object(try reference(at: start + (count + entry) * referenceSize), &expansion)
            }
            return .dictionary(dictionary)
        default:
            throw Malformed(description: "unknown marker \(marker)")
        }
    }
}
