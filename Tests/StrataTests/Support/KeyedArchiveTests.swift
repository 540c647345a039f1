import Foundation
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

/// Writes small binary property lists object by object (one-byte offsets and references), so
/// that tests can build lists no Foundation writer would.
struct HandMadePropertyList {
    enum Object {
        case string(String)
        case uid(UInt8)
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
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            switch object {
            case .string(let text):
                // Lengths of 15 and more follow the marker as a one-byte integer object.
                bytes += text.utf8.count < 15 ? [0x50 | UInt8(text.utf8.count)] : [0x5F, 0x10, UInt8(text.utf8.count)]
                bytes += Array(text.utf8)
            case .uid(let value):
                bytes += [0x80, value]
            case .array(let members):
                bytes.append(0xA0 | UInt8(members.count))
                bytes += members.map { UInt8($0) }
            case .dictionary(let entries):
                bytes.append(0xD0 | UInt8(entries.count))
                bytes += entries.map { UInt8($0.key) } + entries.map { UInt8($0.value) }
            }
        }
        let tableOffset = bytes.count
        bytes += offsets
        func bigEndian(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(objects.count) + bigEndian(top) + bigEndian(tableOffset)
        return Data(bytes)
    }
}
