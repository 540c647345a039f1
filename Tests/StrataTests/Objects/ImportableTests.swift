import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The kit's sample data: teachers, the schools they run, and students who attend them.
struct TeacherImport: Identifiable, Importable {
    typealias ImporterData = Void
    var id: Int
    var firstName: String
    var lastName: String

    func importIntoContext(_ context: ObjectContext, importerData: inout Void) -> PersistenceResult {
        let teacher = SchoolModel.Teacher(context: context)
        teacher.id = id
        teacher.firstName = firstName
        teacher.lastName = lastName
        return .insert(teacher.objectID)
    }
}

struct SchoolImport: Identifiable, Importable {
    var id: String
    var name: String
    var teacher: Int

    struct UnknownTeacher: Error, Equatable { var id: Int }

    static func generateImporterData(objects: [Self], context: ObjectContext) throws -> [Int: SchoolModel.Teacher] {
        let teachers = try context.fetch(
            FetchRequest<SchoolModel.Teacher>(predicate: (\SchoolModel.Teacher.id).in(objects.map(\.teacher))))
        return Dictionary(teachers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func importIntoContext(_ context: ObjectContext, importerData: inout [Int: SchoolModel.Teacher]) throws
        -> PersistenceResult
    {
        guard let teacher = importerData[self.teacher] else { throw UnknownTeacher(id: self.teacher) }
        let school = SchoolModel.School(context: context)
        school.id = id
        school.name = name
        school.teacher = teacher
        return .insert(school.objectID)
    }
}

struct StudentImport: Identifiable, Importable {
    var id: Int
    var firstName: String
    var lastName: String
    var school: String?
    var leaves = false

    struct ImporterData {
        var students: [Int: SchoolModel.Student]
        var schools: [String: SchoolModel.School]
        var calls = 0
    }

    static func generateImporterData(objects: [Self], context: ObjectContext) throws -> ImporterData {
        let students = try context.fetch(SchoolModel.Student.self)
        let schools = try context.fetch(SchoolModel.School.self)
        return ImporterData(
            students: Dictionary(students.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            schools: Dictionary(schools.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    func importIntoContext(_ context: ObjectContext, importerData: inout ImporterData) -> PersistenceResult {
        importerData.calls += 1
        guard let student = importerData.students[id] else {
            if leaves { return .noAction }
            let student = SchoolModel.Student(context: context)
            student.id = id
            student.firstName = firstName
            student.lastName = lastName
            student.school = school.flatMap { importerData.schools[$0] }
            importerData.students[id] = student  // a later item with the same id updates it
            return .insert(student.objectID)
        }
        if leaves {
            context.delete(student)
            importerData.students[id] = nil
            return .delete(student.objectID)
        }
        var changed = student.update(\.firstName, value: firstName)
        changed = student.updateIfAvailable(\.lastName, value: lastName) || changed
        changed = student.update(\.school, value: school.flatMap { importerData.schools[$0] }) || changed
        return changed ? .update(student.objectID) : .noAction
    }
}

/// The data-stack kit's two-phase importer, with its own test scenario ported: students first,
/// then teachers, schools and the students again, who are updated with their schools.
@Suite @MainActor struct ImportableTests {
    let stack: PreviewStack
    var viewContext: ObjectContext { stack.viewContext }

    static let teachers = [
        TeacherImport(id: 1, firstName: "Walter", lastName: "White"),
        TeacherImport(id: 2, firstName: "Minerva", lastName: "McGonagall"),
    ]
    static let schools = [
        SchoolImport(id: "JPW", name: "J. P. Wynne High", teacher: 1),
        SchoolImport(id: "HOG", name: "Hogwarts", teacher: 2),
    ]
    static let students = [
        StudentImport(id: 10, firstName: "Jesse", lastName: "Pinkman", school: "JPW"),
        StudentImport(id: 11, firstName: "Hermione", lastName: "Granger", school: "HOG"),
        StudentImport(id: 12, firstName: "Harry", lastName: "Potter", school: "HOG"),
    ]

    init() throws {
        stack = try PreviewStack(entities: SchoolModel.types)
        // The kit's setUp: students imported (without schools) and saved.
        let withoutSchools = Self.students.map { var student = $0; student.school = nil; return student }
        let results: [PersistenceResult] = try stack.viewContext.importPersistableObjects(withoutSchools)
        #expect(results.allSatisfy { if case .insert = $0 { true } else { false } })
        try stack.viewContext.save()
    }

    @Test func resultsKeyedByIdentifier() throws {
        let byID: [Int: PersistenceResult] = try viewContext.importPersistableObjects(Self.teachers)
        #expect(byID.keys.sorted() == Self.teachers.map(\.id).sorted())
    }

    @Test func teachersSchoolsThenStudentsInsertThenUpdate() throws {
        let teacherResults: [PersistenceResult] = try viewContext.importPersistableObjects(Self.teachers)
        let schoolResults: [PersistenceResult] = try viewContext.importPersistableObjects(Self.schools)
        let studentResults: [PersistenceResult] = try viewContext.importPersistableObjects(Self.students)

        for (teacher, result) in zip(Self.teachers, teacherResults) {
            guard case .insert(let objectID) = result else {
                Issue.record("Expected to insert teacher \(teacher.id) but got \(result)")
                continue
            }
            #expect(try viewContext.existing(SchoolModel.Teacher.self, withID: objectID).id == teacher.id)
        }
        for (school, result) in zip(Self.schools, schoolResults) {
            guard case .insert(let objectID) = result else {
                Issue.record("Expected to insert school \(school.id) but got \(result)")
                continue
            }
            let saved = try viewContext.existing(SchoolModel.School.self, withID: objectID)
            #expect(saved.id == school.id)
            #expect(saved.teacher?.id == school.teacher)
        }
        for (student, result) in zip(Self.students, studentResults) {
            guard case .update(let objectID) = result else {
                Issue.record("Expected to update student \(student.id) but got \(result)")
                continue
            }
            let saved = try viewContext.existing(SchoolModel.Student.self, withID: objectID)
            #expect(saved.id == student.id)
            #expect(saved.school?.id == student.school)
        }
        #expect(try viewContext.fetch(SchoolModel.School.self).first { $0.id == "HOG" }?.students.count == 2)
        try viewContext.save()

        // The same data again changes nothing.
        let again: [Int: PersistenceResult] = try viewContext.importPersistableObjects(Self.students)
        #expect(again.values.allSatisfy { if case .noAction = $0 { true } else { false } })
        #expect(!viewContext.hasChanges)
    }

    @Test func aFailingItemIsRecordedAndTheOthersAreImported() throws {
        _ = try viewContext.importPersistableObjects(Self.teachers) as [PersistenceResult]
        let schools = [Self.schools[0], SchoolImport(id: "XXX", name: "Nowhere", teacher: 99), Self.schools[1]]
        let results: [PersistenceResult] = try viewContext.importPersistableObjects(schools)
        #expect(results.map { $0.objectID != nil } == [true, false, true])
        #expect(results[1].error as? SchoolImport.UnknownTeacher == SchoolImport.UnknownTeacher(id: 99))
        #expect(results[1].description == "fail(UnknownTeacher(id: 99))")
        #expect(try viewContext.fetch(SchoolModel.School.self).map(\.id).sorted() == ["HOG", "JPW"])
    }

    @Test func importerDataIsMadeOnceAndSharedInOrder() throws {
        let items = [
            StudentImport(id: 20, firstName: "Ron", lastName: "Weasley"),
            StudentImport(id: 20, firstName: "Ronald", lastName: "Weasley"),  // same id: updates the first
            StudentImport(id: 10, firstName: "Jesse", lastName: "Pinkman", leaves: true),
            StudentImport(id: 30, firstName: "Nobody", lastName: "Here", leaves: true),
        ]
        let results: [PersistenceResult] = try viewContext.importPersistableObjects(items)
        #expect(results.map { String($0.description.prefix(6)) } == ["insert", "update", "delete", "noActi"])
        let ron = try #require(try viewContext.fetch(SchoolModel.Student.self).first { $0.id == 20 })
        #expect(ron.firstName == "Ronald")
        #expect(try viewContext.fetch(SchoolModel.Student.self).count == 3)  // 10, 11, 12 + 20 − 10

        let byID: [Int: PersistenceResult] = try viewContext.importPersistableObjects(Array(items.prefix(2)))
        #expect(byID.count == 1)  // the later item's result is kept
        #expect(byID[20]?.description.hasPrefix("update") == true)  // Ron, then Ronald again
        #expect(ron.firstName == "Ronald")
    }

    @Test func importerDataThatThrowsEndsTheImportBeforeAnyItem() throws {
        struct Refused: Error {}
        struct Refusing: Importable {
            static func generateImporterData(objects: [Self], context: ObjectContext) throws -> Int { throw Refused() }
            func importIntoContext(_ context: ObjectContext, importerData: inout Int) -> PersistenceResult {
                _ = SchoolModel.Student(context: context)
                return .noAction
            }
        }
        #expect(throws: Refused.self) { try viewContext.importPersistableObjects([Refusing(), Refusing()]) }
        #expect(!viewContext.hasChanges)
    }
}
