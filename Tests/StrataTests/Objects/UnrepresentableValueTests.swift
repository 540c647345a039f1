import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Values SQLite cannot keep exactly (NaN, negative zero) are refused at validation with a typed
/// error instead of being saved as something else.
@Suite struct UnrepresentableValueTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Sample.self], in: directory)
    }

    /// The properties a save of one sample set up by `change` fails for.
    func refusedProperties(_ change: (Sample) -> Void) throws -> [String] {
        let context = container.newBackgroundContext()
        let sample = Sample(context: context)
        change(sample)
        do {
            try context.save()
            return []
        } catch let error as StrataError {
            #expect(error.code == .validationFailed)
            #expect(error.details.allSatisfy { $0.code == .unrepresentableValue }, "\(error.details)")
            return error.details.compactMap(\.propertyName).sorted()
        }
    }

    @Test func nanIsRefusedInEveryTypeThatHasOne() throws {
        #expect(try refusedProperties { $0.double = .nan } == ["double"])
        #expect(try refusedProperties { $0.double = -.nan } == ["double"])
        #expect(try refusedProperties { $0.float = .signalingNaN } == ["float"])
        #expect(try refusedProperties { $0.decimal = .nan } == ["decimal"])
        #expect(try refusedProperties { $0.date = Date(timeIntervalSinceReferenceDate: .nan) } == ["date"])
        // All at once, each named.
        let all = try refusedProperties {
            $0.double = .nan
            $0.float = .nan
            $0.decimal = .nan
        }
        #expect(all == ["decimal", "double", "float"])
        // Nothing was saved.
        #expect(try container.newBackgroundContext().count(for: Sample.self) == 0)
    }

    @Test func negativeZeroIsRefusedRatherThanSavedAsZero() throws {
        #expect(try refusedProperties { $0.double = -0.0 } == ["double"])
        #expect(try refusedProperties { $0.float = -0.0 } == ["float"])
        let context = container.newBackgroundContext()
        let sample = Sample(context: context)
        sample.double = -0.0
        #expect(sample.validationFailures().first?.message.contains("negative zero") == true)
    }

    @Test func valuesThatRoundTripAreSavedExactly() throws {
        let context = container.newBackgroundContext()
        let sample = Sample(context: context)
        sample.double = .infinity
        sample.float = -.infinity
        sample.decimal = Decimal(string: "-0.000000000000000000000000000001") ?? 0
        sample.date = Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude)
        try context.save()
        let reread = try #require(try container.newBackgroundContext().fetch(Sample.self).first)
        #expect(reread.double == .infinity)
        #expect(reread.float == -.infinity)
        #expect(reread.decimal == sample.decimal)
        #expect(reread.date == sample.date)
    }

    @Test func aSavedNaNIsNeverReadBackAsANumber() throws {
        // Before validation refused it, NaN was stored as NULL and read back as 0.0.
        let context = container.newBackgroundContext()
        let sample = Sample(context: context)
        sample.double = 1
        try context.save()
        sample.double = .nan
        #expect(throws: StrataError.self) { try context.save() }
        context.rollback()
        let reread = try #require(try container.newBackgroundContext().fetch(Sample.self).first)
        #expect(reread.double == 1)
    }
}
