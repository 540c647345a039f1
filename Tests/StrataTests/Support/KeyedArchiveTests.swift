import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Transformable values as Core Data stores them (an `NSKeyedArchiver` archive, or a plain
/// property list) become JSON that `JSONDecoder` reads into the Swift types they stood for.
@Suite struct KeyedArchiveTests {
    struct Track: Codable, Equatable {
        var title: String
        var bpm: Int
        var rating: Double
        var live: Bool
        var tags: [String]
        var credits: [String: String]
        var added: Date
        var cover: Data
        var id: UUID
        var link: URL
        var note: String?
    }

    static let track = Track(
        title: "So What", bpm: 136, rating: 4.5, live: false, tags: ["modal", "jazz"], credits: ["trumpet": "Miles"],
        added: Date(timeIntervalSinceReferenceDate: -1_234_567.25), cover: Data([0, 1, 2, 255]),
        id: UUID(uuidString: "0F1E2D3C-4B5A-4978-8796-A5B4C3D2E1F0")!, link: URL(string: "https://example.com/so-what?x=1")!,
        note: nil)

    @Test func aKeyedArchiveOfFoundationObjectsDecodesAsTheCodableValue() throws {
        let track = Self.track
        let dictionary: NSDictionary = [
            "title": track.title as NSString, "bpm": NSNumber(value: track.bpm), "rating": NSNumber(value: track.rating),
            "live": NSNumber(value: track.live), "tags": track.tags as NSArray, "credits": track.credits as NSDictionary,
            "added": track.added as NSDate, "cover": track.cover as NSData, "id": track.id as NSUUID, "link": track.link as NSURL,
            "note": NSNull(),
        ]
        let archive = try NSKeyedArchiver.archivedData(withRootObject: dictionary, requiringSecureCoding: false)
        let json = try KeyedArchive.jsonData(from: archive)
        #expect(try JSONDecoder().decode(Track.self, from: json) == track)
    }

    @Test func setsAndNestedArraysBecomeArrays() throws {
        let archive = try NSKeyedArchiver.archivedData(
            withRootObject: [NSSet(array: ["a"]), [[1, 2], [3]] as NSArray] as NSArray, requiringSecureCoding: false)
        let json = try KeyedArchive.jsonData(from: archive)
        #expect(String(decoding: json, as: UTF8.self) == #"[["a"],[[1,2],[3]]]"#)
    }

    @Test func aPlainBinaryPropertyListDecodesToo() throws {
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["name": "Kind of Blue", "year": 1959, "sides": ["A", "B"]], format: .binary, options: 0)
        let json = try KeyedArchive.jsonData(from: plist)
        #expect(String(decoding: json, as: UTF8.self) == #"{"name":"Kind of Blue","sides":["A","B"],"year":1959}"#)
    }

    @Test func damagedArchivesThrowAndNeverTrap() throws {
        let archive = try NSKeyedArchiver.archivedData(
            withRootObject: ["title": "So What", "tags": ["a", "b"], "n": 3] as NSDictionary, requiringSecureCoding: false)
        var generator = SplitMix64(seed: 0x5EED)
        var rejected = 0
        for round in 0..<3_000 {
            var bytes = Array(archive)
            if round % 3 == 0 {
                bytes.removeLast(Int.random(in: 1..<bytes.count, using: &generator))
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            do {
                _ = try KeyedArchive.jsonData(from: Data(bytes))
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 1_000)  // truncations alone are a third
    }

    @Test func aListThatExpandsExponentiallyIsRefusedQuickly() throws {
        // 40 arrays, each holding the one before twice: 2^40 strings from a few hundred bytes.
        var list = HandMadePropertyList()
        var previous = list.add(.string("x"))
        for _ in 0..<40 { previous = list.add(.array([previous, previous])) }
        let error = #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: list.data(top: previous)) }
        #expect(error?.description.contains("more than 1000000 values") == true)
    }

    @Test func deepNestingIsRefusedNotAStackOverflow() throws {
        var list = HandMadePropertyList()
        var previous = list.add(.string("x"))
        for _ in 0..<20_000 { previous = list.add(.array([previous])) }
        let error = #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: list.data(top: previous)) }
        #expect(error?.description.contains("nests deeper than 512 levels") == true)
        // The same through an archive's references: each NSArray's only member is the next.
        func chainedArchive(levels: Int) -> Data {
            var archive = HandMadePropertyList()
            let className = archive.add(.dictionary([(archive.add(.string("$classname")), archive.add(.string("NSArray")))]))
            let objectsKey = archive.add(.string("NS.objects"))
            let classKey = archive.add(.string("$class"))
            var entries = [archive.add(.string("$null")), className]  // $objects[0] and [1]
            for level in 0..<levels {
                let member = archive.add(.uid(UInt16(level + 3)))  // $objects[level + 2] holds [level + 3]
                entries.append(archive.add(.dictionary([(objectsKey, archive.add(.array([member]))), (classKey, archive.add(.uid(1)))])))
            }
            entries.append(archive.add(.string("bottom")))
            let root = archive.add(.dictionary([
                (archive.add(.string("$archiver")), archive.add(.string("NSKeyedArchiver"))),
                (archive.add(.string("$objects")), archive.add(.array(entries))),
                (archive.add(.string("$top")), archive.add(.dictionary([(archive.add(.string("root")), archive.add(.uid(2)))]))),
            ]))
            return archive.data(top: root)
        }
        let shallow = try KeyedArchive.jsonData(from: chainedArchive(levels: 3))
        #expect(String(decoding: shallow, as: UTF8.self) == #"[[["bottom"]]]"#)
        let deep = #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: chainedArchive(levels: 5_000)) }
        #expect(deep?.description.contains("nests deeper than 512 levels") == true)
    }

    @Test func sharedDataRepeatedByReferencesIsRefusedNotExpanded() throws {
        // One megabyte, referenced 20 × 20 = 400 times by nested arrays: 400 MB of Base64.
        var list = HandMadePropertyList()
        let blob = list.add(.data(Data(repeating: 0xAB, count: 1 << 20)))
        let inner = list.add(.array(Array(repeating: blob, count: 20)))
        let outer = list.add(.array(Array(repeating: inner, count: 20)))
        let error = #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: list.data(top: outer)) }
        #expect(error?.description.contains("too many bytes") == true)
    }

    @Test func unsignedIntegersAboveInt64MaxStayPositive() throws {
        var list = HandMadePropertyList()
        let big = list.add(.integer16(high: 0, low: UInt64.max))
        let top = list.add(.array([big]))
        let json = try KeyedArchive.jsonData(from: list.data(top: top))
        #expect(String(decoding: json, as: UTF8.self) == "[18446744073709551615]")
        var wide = HandMadePropertyList()
        let tooWide = wide.add(.integer16(high: 1, low: 0))
        #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: wide.data(top: tooWide)) }
    }

    @Test func anObjectThatContainsItselfIsRefused() throws {
        // $objects: ["$null", an NSArray whose only member is itself, its class].
        var list = HandMadePropertyList()
        let null = list.add(.string("$null"))
        let uid1 = list.add(.uid(1))
        let uid2 = list.add(.uid(2))
        let members = list.add(.array([uid1]))
        let array = list.add(.dictionary([(list.add(.string("NS.objects")), members), (list.add(.string("$class")), uid2)]))
        let className = list.add(.dictionary([(list.add(.string("$classname")), list.add(.string("NSArray")))]))
        let objects = list.add(.array([null, array, className]))
        let top = list.add(.dictionary([(list.add(.string("root")), uid1)]))
        let root = list.add(.dictionary([
            (list.add(.string("$archiver")), list.add(.string("NSKeyedArchiver"))),
            (list.add(.string("$objects")), objects), (list.add(.string("$top")), top),
        ]))
        let error = #expect(throws: KeyedArchive.Unreadable.self) { try KeyedArchive.jsonData(from: list.data(top: root)) }
        #expect(error?.description.contains("contains itself") == true, "\(String(describing: error))")
    }
}

/// Writes binary property lists object by object (four-byte offsets, two-byte references), so
/// that tests can build lists no Foundation writer would.
struct HandMadePropertyList {
    enum Object {
        case string(String)
        case data(Data)
        case integer16(high: UInt64, low: UInt64)
        case uid(UInt16)
        case array([Int])
        case dictionary([(key: Int, value: Int)])
    }

    private var objects: [Object] = []

    mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    func data(top: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        func bigEndian(_ value: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        // A marker with its length: in the low nibble, or in a four-byte integer after it.
        func marker(_ type: UInt8, _ count: Int) -> [UInt8] {
            count < 15 ? [type << 4 | UInt8(count)] : [type << 4 | 0xF, 0x12] + bigEndian(count, 4)
        }
        func references(_ indexes: [Int]) -> [UInt8] { indexes.flatMap { bigEndian($0, 2) } }
        for object in objects {
            offsets.append(bytes.count)
            switch object {
            case .string(let text):
                bytes += marker(0x5, text.utf8.count) + Array(text.utf8)
            case .data(let data):
                bytes += marker(0x4, data.count) + Array(data)
            case .integer16(let high, let low):
                bytes += [0x14] + bigEndian(Int(bitPattern: UInt(high)), 8) + bigEndian(Int(bitPattern: UInt(low)), 8)
            case .uid(let value):
                bytes += value < 256 ? [0x80, UInt8(value)] : [0x81, UInt8(value >> 8), UInt8(value & 0xFF)]
            case .array(let members):
                bytes += marker(0xA, members.count) + references(members)
            case .dictionary(let entries):
                bytes += marker(0xD, entries.count) + references(entries.map(\.key)) + references(entries.map(\.value))
            }
        }
        let tableOffset = bytes.count
        bytes += offsets.flatMap { bigEndian($0, 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 2] + bigEndian(objects.count, 8) + bigEndian(top, 8) + bigEndian(tableOffset, 8)
        return Data(bytes)
    }
}
