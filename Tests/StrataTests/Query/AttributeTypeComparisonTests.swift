import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Every attribute type compares correctly, in SQL and in memory alike.
@Suite struct AttributeTypeComparisonTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer
    static let uuids = [
        UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
        UUID(uuidString: "7F000000-0000-0000-0000-000000000000")!,
        UUID(uuidString: "80000000-0000-0000-0000-000000000000")!,
        UUID(uuidString: "FFFFFFFF-0000-0000-0000-000000000000")!,
    ]

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Sample.self], in: directory)
        let context = container.newBackgroundContext()
        for index in 0..<4 {
            let sample = Sample(context: context)
            sample.int64 = Int64(index)
            sample.int16 = Int16(index * 10 - 15)
            sample.int32 = Int32.max - Int32(index)
            sample.int = Int.min + index
            sample.double = [-1.5, 0, 0.1, 1e300][index]
            sample.float = [Float(0.1), 2.5, -3, 1e30][index]
            sample.decimal =
                [Decimal(string: "0.1")!, Decimal(string: "0.30")!, Decimal(string: "10.000000000000000000001")!, -2][
                    index]
            sample.string = ["b", "B", "é", "e\u{301}x"][index]
            sample.bool = index.isMultiple(of: 2)
            sample.date = Date(timeIntervalSinceReferenceDate: [-1e9, 0, 0.5, 1e9][index])
            sample.data = [Data([0x00]), Data([0x00, 0x00]), Data([0x7F]), Data([0xFF])][index]
            sample.uuid = Self.uuids[index]
            sample.url = URL(
                string: ["https://a.example/x", "https://b.example/", "file:///tmp/z", "https://a.example/x?q=1"][index]
            )!
            sample.location = Location(latitude: Double(index), longitude: 0)
            sample.optionalString = index == 3 ? nil : "s\(index)"
        }
        try context.save()
    }

    /// The `int64` numbers of the samples `predicate` selects, from the store and in memory.
    func selected(_ predicate: QueryPredicate) throws -> (store: [Int64], memory: [Int64]) {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Sample>(predicate: FetchPredicate(predicate), sortDescriptors: [.ascending(\.int64)])
        let fromStore = try context.fetch(request).map(\.int64)
        let resolved = try PredicateResolver.resolve(predicate, for: Sample.entity, in: container.schema)
        let evaluator = PredicateEvaluator(predicate: resolved)
        let inMemory = try context.fetch(FetchRequest<Sample>(sortDescriptors: [.ascending(\.int64)])).filter {
            evaluator.evaluate($0)
        }.map(\.int64)
        return (fromStore, inMemory)
    }

    static let cases: [(String, QueryPredicate, [Int64])] = [
        ("int16 <", .comparison(.keyPath("int16"), .lessThan, .value(.integer(0))), [0, 1]),
        ("int16 vs fraction", .comparison(.keyPath("int16"), .greaterThan, .value(.double(-5.5))), [1, 2, 3]),
        (
            "int32 near max",
            .comparison(.keyPath("int32"), .greaterThanOrEqualTo, .value(.integer(Int64(Int32.max - 1)))), [0, 1]
        ),
        ("int near min", .comparison(.keyPath("int"), .lessThanOrEqualTo, .value(.integer(Int64.min + 1))), [0, 1]),
        ("double ==", .comparison(.keyPath("double"), .equalTo, .value(.double(0.1))), [2]),
        ("double huge", .comparison(.keyPath("double"), .greaterThan, .value(.integer(Int64.max))), [3]),
        ("float == its own rounding", .comparison(.keyPath("float"), .equalTo, .value(.float(0.1))), [0]),
        ("float <", .comparison(.keyPath("float"), .lessThan, .value(.integer(0))), [2]),
        (
            "decimal exact", .comparison(.keyPath("decimal"), .greaterThan, .value(.decimal(Decimal(string: "10")!))),
            [2]
        ),
        (
            "decimal 0.30 == 0.3",
            .comparison(.keyPath("decimal"), .equalTo, .value(.decimal(Decimal(string: "0.3")!))), [1]
        ),
        ("decimal ordering is numeric", .comparison(.keyPath("decimal"), .lessThan, .value(.integer(1))), [0, 1, 3]),
        (
            "decimal IN", .comparison(.keyPath("decimal"), .in, .list([.value(.integer(-2)), .value(.double(0.1))])),
            [0, 3]
        ),
        ("string binary", .comparison(.keyPath("string"), .lessThan, .value(.string("b"))), [1]),
        ("string scalars", .comparison(.keyPath("string"), .beginsWith, .value(.string("e"))), [3]),
        (
            "string [c]", .comparison(.keyPath("string"), .equalTo, .value(.string("b")), options: .caseInsensitive),
            [0, 1]
        ),
        (
            "string [d]",
            .comparison(.keyPath("string"), .beginsWith, .value(.string("e")), options: .diacriticInsensitive), [2, 3]
        ),
        ("bool", .comparison(.keyPath("bool"), .equalTo, .value(.boolean(true))), [0, 2]),
        ("bool as number", .comparison(.keyPath("bool"), .equalTo, .value(.integer(0))), [1, 3]),
        (
            "date <",
            .comparison(.keyPath("date"), .lessThan, .value(.date(Date(timeIntervalSinceReferenceDate: 0.25)))), [0, 1]
        ),
        (
            "date BETWEEN",
            .comparison(
                .keyPath("date"), .between,
                .list([
                    .value(.date(Date(timeIntervalSinceReferenceDate: 0))),
                    .value(.date(Date(timeIntervalSinceReferenceDate: 1))),
                ])), [1, 2]
        ),
        ("data bytes", .comparison(.keyPath("data"), .greaterThan, .value(.data(Data([0x00])))), [1, 2, 3]),
        ("data ==", .comparison(.keyPath("data"), .equalTo, .value(.data(Data([0x00, 0x00])))), [1]),
        ("uuid ==", .comparison(.keyPath("uuid"), .equalTo, .value(.uuid(uuids[2]))), [2]),
        ("uuid bytes order", .comparison(.keyPath("uuid"), .greaterThan, .value(.uuid(uuids[1]))), [2, 3]),
        ("uuid from string", .comparison(.keyPath("uuid"), .equalTo, .value(.string(uuids[3].uuidString))), [3]),
        ("url ==", .comparison(.keyPath("url"), .equalTo, .value(.url(URL(string: "https://b.example/")!))), [1]),
        ("url BEGINSWITH", .comparison(.keyPath("url"), .beginsWith, .value(.string("https://a."))), [0, 3]),
        (
            "codable ==",
            .comparison(.keyPath("location"), .equalTo, .value(.codable(Data(#"{"latitude":2,"longitude":0}"#.utf8)))),
            [2]
        ),
        ("optional == nil", .comparison(.keyPath("optionalString"), .equalTo, .value(.null)), [3]),
        ("optional != value", .comparison(.keyPath("optionalString"), .notEqualTo, .value(.string("s0"))), [1, 2, 3]),
        ("nil is not ordered", .comparison(.keyPath("optionalString"), .lessThan, .value(.string("zzz"))), [0, 1, 2]),
        ("NOT of nil ordering", .not(.comparison(.keyPath("optionalString"), .lessThan, .value(.string("zzz")))), [3]),
    ]

    @Test(arguments: cases.indices)
    func comparesTheSameInSQLAndInMemory(_ index: Int) throws {
        let (name, predicate, expected) = Self.cases[index]
        let result = try selected(predicate)
        #expect(result.store == expected, "\(name): \(predicate)")
        #expect(result.memory == expected, "\(name) in memory: \(predicate)")
    }

    @Test func sortingByEveryOrderedTypeAgrees() throws {
        let context = container.newBackgroundContext()
        for key in [
            "int16", "int32", "int", "double", "float", "decimal", "string", "bool", "date", "data", "uuid", "url",
            "optionalString",
        ] {
            for ascending in [true, false] {
                let descriptor = QuerySortDescriptor(key: key, ascending: ascending)
                let fromStore = try context.fetch(
                    FetchRequest<Sample>(sortDescriptors: [FetchSortDescriptor(key: key, ascending: ascending)]))
                var inMemory: [ManagedObject] = fromStore.sorted { $0.int64 < $1.int64 }
                context.sortInMemory(
                    &inMemory,
                    by: try PredicateResolver.resolveSorts([descriptor], for: Sample.entity, in: container.schema))
                #expect(
                    fromStore.map(\.objectID) == inMemory.map(\.objectID), "sorted by \(key) ascending: \(ascending)")
            }
        }
        let byDecimal = try context.fetch(FetchRequest<Sample>(sortDescriptors: [.ascending(\.decimal)])).map(\.int64)
        #expect(byDecimal == [3, 0, 1, 2])
    }
}
