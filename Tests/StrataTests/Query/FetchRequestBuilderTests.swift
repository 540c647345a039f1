import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The stack kit's test model: people with a first name, an optional last name and an age.
enum BuilderModel {
    @Entity final class Person: ManagedObject {
        var firstName: String = ""
        var lastName: String?
        var age: Int = 0
        var jobTitle: String = ""
        var mentor: Person?
        @Relationship(inverse: \Person.mentor) var mentees: Set<Person> = []
    }
}

/// The stack kit's fetch-request builders with the kit's meanings, its own tests ported (over
/// unsaved objects, as the kit runs them, and over saved ones), and Core Data's answer for
/// mixed-type values.
@Suite struct FetchRequestBuilderTests {
    typealias Person = BuilderModel.Person

    let container: PersistentContainer
    let context: ObjectContext

    /// The kit's six people; saved when `saved`.
    init() throws {
        container = try PersistentContainer(name: "Builders", entities: [Person.self], storeDescriptions: [.inMemory])
        context = container.newBackgroundContext()
        for (first, last, age) in [
            ("zara", nil, 18), ("geno", nil, 15), ("geno", nil, 18), ("liubo", nil, 15), ("tenio", "ivanov", 21),
            ("ivanov", "ivanov", 40),
        ] as [(String, String?, Int)] {
            let person = try Person(insertingInto: context)
            person.firstName = first
            person.lastName = last
            person.age = age
        }
    }

    func fetch(_ request: FetchRequest<Person>, saved: Bool) throws -> [Person] {
        if saved { _ = try context.saveIfNeeded() }
        return try request.execute(with: context)
    }

    @Test func basicConfigurationSetsAndReplaces() throws {
        let predicate = try FetchPredicate<Person>(format: "firstName == %@", "geno")
        let sortDescriptors = [FetchSortDescriptor<Person>(key: "age", ascending: true)]
        var request = Person.makeFetchRequest()
        #expect(request.predicate == nil && request.sortDescriptors.isEmpty)
        request.configureWith(predicate: predicate)
        #expect(request.predicate == predicate)
        request.configureWith(sortDescriptors: sortDescriptors)
        #expect(request.sortDescriptors == sortDescriptors)
        #expect(request.configured(with: nil as FetchPredicate<Person>?).predicate == nil)
    }

    @Test func quickSortConfigurationReplacesTheSort() {
        let request = Person.makeFetchRequest().sortedBy(key: "firstName").sortedBy(key: "name", ascending: true)
        #expect(request.sortDescriptors.count == 1)
        #expect(request.sortDescriptors.first?.key == "name")
        #expect(request.sortDescriptors.first?.ascending == true)
        let both = Person.makeFetchRequest().sortedBy(key: "age").thenSortedBy(key: "firstName", ascending: false)
        #expect(both.sortDescriptors.map(\.key) == ["age", "firstName"])
    }

    @Test(arguments: [false, true]) func fetchAllAndSorting(saved: Bool) throws {
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "age", value: 15).fetchingAll(), saved: saved).count == 6)
        let ascending = try fetch(Person.makeFetchRequest().fetchingAll().sortedBy(key: "age", ascending: true), saved: saved)
        #expect(ascending.map(\.age) == [15, 15, 18, 18, 21, 40])
        let descending = try fetch(Person.makeFetchRequest().fetchingAll().sortedBy(key: "age", ascending: false), saved: saved)
        #expect(descending.map(\.age) == [40, 21, 18, 18, 15, 15])
    }

    @Test(arguments: [false, true]) func theKitsBuilderCounts(saved: Bool) throws {
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "firstName", value: "geno"), saved: saved).count == 2)
        let pairs: [String: Any] = ["firstName": "geno", "age": 15]
        #expect(try fetch(try Person.makeFetchRequest().fetchingBy(pairs: pairs), saved: saved).count == 1)
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(pairs: ["firstName": "geno", "age": 15]), saved: saved).count == 1)
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(keys: ["firstName", "lastName"], value: "ivanov"), saved: saved).count == 1)
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(keys: ["firstName", "lastName"], value: "ivanov"), saved: saved).count == 2)
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(key: "age", values: [15, 21]), saved: saved).count == 3)
        // Mixed types, by design: "ivanov" matches the names, 15 the ages (Core Data's answer).
        #expect(
            try fetch(Person.makeFetchRequest().fetchingFor(keys: ["firstName", "lastName", "age"], values: ["ivanov", 15]), saved: saved)
                .count == 4)
    }

    @Test(arguments: [false, true]) func valuesThatCannotEqualTheAttributeMatchNothing(saved: Bool) throws {
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "firstName", value: 30), saved: saved).isEmpty)
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(key: "age", values: ["old", "young"]), saved: saved).isEmpty)
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(key: "age", values: ["old", 40]), saved: saved).map(\.firstName) == ["ivanov"])
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "mentor", value: "nobody"), saved: saved).isEmpty)
        // An unknown key is still an error: it is never a value's type.
        let error = #expect(throws: StrataError.self) {
            try fetch(Person.makeFetchRequest().fetchingBy(key: "nickname", value: "Sam"), saved: saved)
        }
        #expect(error?.code == .unknownKey)
    }

    @Test func formatStringsStillReportAMismatchAsAnError() throws {
        let error = #expect(throws: StrataError.self) {
            try context.fetch(try FetchRequest<Person>(format: "firstName == %@", 30))
        }
        #expect(error?.code == .typeMismatch)
        #expect(throws: StrataError.self) { try context.fetch(try FetchRequest<Person>(format: "firstName IN %@", argumentArray: [["Sam", 30]])) }
    }

    @Test func argumentsGatheredAtRunTime() throws {
        let arguments: [Any] = ["firstName", ["geno", "zara"]]
        let request = try FetchRequest<Person>(format: "%K IN %@", argumentArray: arguments)
        #expect(try context.fetch(request).count == 3)
        let optional: String? = nil
        #expect(try context.fetch(try FetchRequest<Person>(format: "lastName == %@", argumentArray: [optional as Any])).count == 4)
        struct NotAValue {}
        let error = #expect(throws: StrataError.self) { try FetchRequest<Person>(format: "age == %@", argumentArray: [NotAValue()]) }
        #expect(error?.code == .invalidPredicate)
        #expect(error?.message.contains("Argument 1 is a NotAValue") == true)
        #expect(throws: StrataError.self) { try Person.makeFetchRequest().fetchingBy(pairs: ["age": NotAValue()] as [String: Any]) }
    }

    @Test func emptyInputsLeaveTheRequestAsItWas() {
        let request = Person.makeFetchRequest().fetchingBy(key: "age", value: 15)
        #expect(request.fetchingFor(key: "age", values: []).predicate == request.predicate)
        #expect(request.fetchingBy(keys: [], value: 1).predicate == request.predicate)
        #expect(request.fetchingFor(keys: ["age"], values: []).predicate == request.predicate)
        #expect(request.fetchingBy(pairs: [:] as [String: any PredicateArgument]).predicate == request.predicate)
    }

    @Test func whereReplacesAndAndWhereAdds() throws {
        let teenagers = Person.makeFetchRequest().where(\.age >= 13).andWhere(\.age < 20)
        #expect(try context.fetch(teenagers).count == 4)
        let replaced = teenagers.where(\.age == 40)
        #expect(try context.fetch(replaced).map(\.firstName) == ["ivanov"])
        let sorted = Person.makeFetchRequest().sorted([.ascending(\.age), .descending(\.firstName)])
        #expect(try context.fetch(sorted).map(\.firstName) == ["liubo", "geno", "zara", "geno", "tenio", "ivanov"])
        #expect(sorted.sorted(by: .descending(\.age)).sortDescriptors.count == 1)
        #expect(sorted.thenSorted(by: .descending(\.age)).sortDescriptors.count == 3)
        #expect(try context.fetch(try Person.makeFetchRequest().where(format: "age == 15").where(format: "age == 18")).count == 2)
        #expect(try context.fetch(try Person.makeFetchRequest().where(format: "age == 15").andWhere(format: "firstName == 'geno'")).count == 1)
    }

    @Test func predicateCollectionsJoin() throws {
        let filters: [FetchPredicate<Person>] = [\.age >= 15, \.age <= 18, (\Person.firstName).equal(to: "geno")]
        #expect(try context.fetch(FetchRequest(predicate: filters.joined(with: .and))).count == 2)
        let either: [FetchPredicate<Person>] = [\.age > 30, (\Person.firstName).equal(to: "geno")]
        #expect(try context.fetch(FetchRequest(predicate: either.joined(with: .or))).count == 3)
        #expect(try context.fetch(FetchRequest(predicate: ([] as [FetchPredicate<Person>]).joined(with: .and))).count == 6)
        #expect(try context.fetch(FetchRequest(predicate: ([] as [FetchPredicate<Person>]).joined(with: .or))).isEmpty)
    }

    @Test func oneCaseAndDiacriticInsensitiveOption() throws {
        let fred = try Person(insertingInto: context)
        fred.firstName = "Frédéric"
        let predicate = (\Person.firstName).equal(to: "FREDERIC", options: .caseAndDiacriticInsensitive)
        #expect(try context.fetch(FetchRequest(predicate: predicate)).map(\.firstName) == ["Frédéric"])
        #expect(ComparisonOptions.caseAndDiacriticInsensitive == [.caseInsensitive, .diacriticInsensitive])
        #expect(predicate.tree.description.contains("==[cd]"))
        let notFred = (\Person.firstName).notEqual(to: "frederic", options: .caseAndDiacriticInsensitive)
        #expect(try context.fetch(FetchRequest(predicate: notFred)).count == 6)
    }

    @Test(arguments: [false, true]) func objectsNaNAndValuesMixInBuildersAsInCoreData(saved: Bool) throws {
        let mentor = try #require(try context.fetch(Person.makeFetchRequest().fetchingBy(key: "firstName", value: "zara")).first)
        let liubo = try #require(try context.fetch(Person.makeFetchRequest().fetchingBy(key: "firstName", value: "liubo")).first)
        liubo.mentor = mentor
        // (Saved first: a predicate naming an unsaved object holds its temporary ID.)
        if saved { try context.save() }
        // A person and a name in one list: the mentor key takes the person, the name key the name.
        let request = Person.makeFetchRequest().fetchingFor(keys: ["firstName", "mentor"], values: ["geno", mentor])
        #expect(try fetch(request, saved: saved).map(\.firstName).sorted() == ["geno", "geno", "liubo"])
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(key: "mentor", values: ["geno", mentor]), saved: saved).map(\.firstName) == ["liubo"])
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "mentor", value: mentor), saved: saved).map(\.firstName) == ["liubo"])
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "firstName", value: mentor), saved: saved).isEmpty)
        #expect(try fetch(Person.makeFetchRequest().fetchingBy(key: "age", value: Double.nan), saved: saved).isEmpty)
        #expect(try fetch(Person.makeFetchRequest().fetchingFor(key: "age", values: [Double.nan, 15]), saved: saved).count == 2)
        // A format string still refuses NaN and mixed lists.
        #expect(throws: StrataError.self) { try context.fetch(try FetchRequest<Person>(format: "age == %@", Double.nan)) }
    }

    @Test func builderPredicatesPrintAndCompareLikeOthers() throws {
        let built = try #require(Person.makeFetchRequest().fetchingBy(key: "firstName", value: "geno").predicate)
        #expect(built.tree.description == #"firstName == "geno""#)
        guard case .comparison(let comparison) = built.tree else {
            Issue.record("expected a comparison")
            return
        }
        #expect(comparison.options.isEmpty)
        // Same text, another meaning (the format string reports mismatches): not equal.
        #expect(built != (try FetchPredicate<Person>(format: "firstName == 'geno'")))
    }

    @Test func numbersFromFoundationKeepEveryDigit() throws {
        let big: Int64 = 9_007_199_254_740_993
        let predicate = try FetchPredicate<Person>(format: "age == %@", argumentArray: [NSNumber(value: big)])
        #expect(predicate.tree.description == "age == \(big)")
        let decimal = try FetchPredicate<Person>(format: "age == %@", argumentArray: [NSDecimalNumber(string: "12.5")])
        #expect(decimal.tree.description == #"age == Decimal("12.5")"#)
        let double = try FetchPredicate<Person>(format: "age == %@", argumentArray: [NSNumber(value: 2.5)])
        #expect(double.tree.description == "age == 2.5")
    }
}
