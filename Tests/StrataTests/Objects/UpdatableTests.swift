import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The data-stack kit's test model: students, teachers and the schools a teacher runs.
enum SchoolModel {
    @Entity final class Student: ManagedObject {
        var id: Int = 0
        var firstName: String = ""
        var lastName: String?
        var grade: Double = 0
        var credits: Int16?
        @Relationship(inverse: \School.students) var school: School?
    }

    @Entity final class Teacher: ManagedObject {
        var id: Int = 0
        var firstName: String = ""
        var lastName: String = ""
        @Relationship(inverse: \School.teacher) var schools: Set<School> = []
        @Relationship(inverse: \Course.teachers) var courses: [Course] = []
    }

    @Entity final class School: ManagedObject {
        var id: String = ""
        var name: String = ""
        var teacher: Teacher?
        var students: Set<Student> = []
    }

    @Entity final class Course: ManagedObject {
        var title: String = ""
        var teachers: Set<Teacher> = []
    }

    static let types: [ManagedObject.Type] = [Student.self, Teacher.self, School.self, Course.self]
}

extension SchoolModel.Student: Updatable {}
extension SchoolModel.Teacher: Updatable {}
extension SchoolModel.School: Updatable {}

/// The kit's `Updatable` cases, ported: setters that write only when the value changes and
/// return whether they wrote.
@Suite @MainActor struct UpdatableTests {
    typealias Student = SchoolModel.Student
    typealias Teacher = SchoolModel.Teacher
    typealias School = SchoolModel.School
    typealias Course = SchoolModel.Course

    let stack: PreviewStack
    var viewContext: ObjectContext { stack.viewContext }

    init() throws {
        stack = try PreviewStack(entities: SchoolModel.types)
    }

    func student(id: Int, firstName: String, lastName: String?) -> Student {
        let student = Student(context: viewContext)
        student.id = id
        student.firstName = firstName
        student.lastName = lastName
        return student
    }

    @Test func equalAssignmentsAreNotChangesInStrata() throws {
        // The kit's testBasicUpdates expects `hasChanges` after equal writes; Strata does not
        // count them (a deliberate difference).
        let john = student(id: 0, firstName: "John", lastName: "Doe")
        try viewContext.save()
        #expect(!john.hasChanges)
        john.id = 0
        john.firstName = "John"
        #expect(!john.hasChanges)
        #expect(try !viewContext.saveIfNeeded())
    }

    @Test func basicProperties() throws {
        let john = student(id: 0, firstName: "John", lastName: "Doe")
        try viewContext.save()
        #expect(!john.hasChanges)

        #expect(!john.update(\.id, value: 0))
        #expect(!john.update(\.firstName, value: "John"))
        #expect(!john.hasChanges)

        #expect(!john.updateIfAvailable(\.firstName, value: nil))
        #expect(!john.updateIfAvailable(\.firstName, value: Optional("John")))
        #expect(!john.hasChanges)

        #expect(!john.update(\.id, value: 1, minimumChange: 2))
        #expect(!john.updateIfAvailable(\.id, value: nil, minimumChange: 0))
        #expect(!john.updateIfAvailable(\.id, value: Optional(1), minimumChange: 2))
        #expect(!john.hasChanges)

        #expect(john.update(\.firstName, value: "Jon"))
        #expect(john.updateIfAvailable(\.lastName, value: Optional("Do")))
        #expect(john.update(\.id, value: 2, minimumChange: 1))
        #expect(john.updateIfAvailable(\.id, value: Optional(5), minimumChange: 2))
        #expect(john.hasChanges)
        #expect((john.id, john.firstName, john.lastName) == (5, "Jon", "Do"))

        try viewContext.save()
        #expect(!john.hasChanges)
    }

    @Test func thresholdsAreInclusiveSignlessAndNeverTrap() throws {
        let john = student(id: 0, firstName: "John", lastName: nil)
        john.grade = 21.0
        try viewContext.save()
        #expect(!john.update(\.grade, value: 21.04, minimumChange: 0.1))
        #expect(!john.update(\.grade, value: 21.1, minimumChange: 0.125))
        #expect(!john.update(\.id, value: 2, minimumChange: 2))  // exactly the threshold: not written
        #expect(!john.update(\.id, value: 2, minimumChange: -2))  // a negative threshold is its magnitude
        #expect(!john.hasChanges)
        #expect(john.update(\.id, value: .max, minimumChange: 2))
        #expect(john.update(\.id, value: .min, minimumChange: .min))  // .max to .min: far apart, no trap
        #expect(!john.update(\.id, value: .min, minimumChange: .min))
        // An optional number that holds nil is always written; then the threshold applies.
        #expect(john.update(\.credits, value: 10, minimumChange: 5))
        #expect(!john.update(\.credits, value: 12, minimumChange: 5))
        #expect(!john.updateIfAvailable(\.credits, value: nil, minimumChange: 1))
        #expect(john.updateIfAvailable(\.credits, value: 20, minimumChange: 5))
        #expect(john.credits == 20)
    }

    @Test func toOneRelationships() throws {
        let teacherA = Teacher(context: viewContext)
        let teacherB = Teacher(context: viewContext)
        let course = School(context: viewContext)
        course.teacher = teacherA
        try viewContext.save()

        #expect(!course.update(\.teacher, value: teacherA))
        #expect(!course.hasChanges && !teacherA.hasChanges && !teacherB.hasChanges)
        #expect(!course.updateIfAvailable(\.teacher, value: nil))
        #expect(!course.hasChanges && !teacherA.hasChanges && !teacherB.hasChanges)

        #expect(course.update(\.teacher, value: teacherB))
        #expect(course.hasChanges && teacherA.hasChanges && teacherB.hasChanges)
        #expect(teacherB.schools == [course] && teacherA.schools.isEmpty)  // inverses in step
        #expect(course.updateIfAvailable(\.teacher, value: Optional(teacherA)))
        #expect(teacherA.schools == [course] && teacherB.schools.isEmpty)
        #expect(course.update(\.teacher, value: nil))
        #expect(teacherA.schools.isEmpty)
    }

    @Test func addingToAToManyRelationship() throws {
        let mrSmith = Teacher(context: viewContext)
        let msDoe = Teacher(context: viewContext)
        let schoolA = School(context: viewContext)
        let schoolB = School(context: viewContext)
        let schoolC = School(context: viewContext)
        schoolA.teacher = mrSmith
        schoolB.teacher = mrSmith
        schoolC.teacher = msDoe

        #expect(!mrSmith.add(\.schools, relation: schoolA))
        #expect(mrSmith.add(\.schools, relation: schoolC))
        #expect(schoolC.teacher === mrSmith)
        #expect(msDoe.schools.isEmpty)
        #expect(!mrSmith.add(\.schools, relation: nil as School?))
        #expect(!mrSmith.add(\.schools, relation: [schoolA, schoolB, schoolC]))

        mrSmith.schools = [schoolA]
        #expect(mrSmith.add(\.schools, relation: [schoolA, schoolB]))
        #expect(mrSmith.schools == [schoolA, schoolB])

        mrSmith.schools = []
        #expect(mrSmith.add(\.schools, relation: [schoolA, schoolB]))
        #expect(mrSmith.schools == [schoolA, schoolB])
        #expect(schoolB.teacher === mrSmith)
    }

    @Test func removingFromAToManyRelationship() throws {
        let mrSmith = Teacher(context: viewContext)
        let schoolA = School(context: viewContext)
        let schoolB = School(context: viewContext)
        schoolA.teacher = mrSmith
        schoolB.teacher = mrSmith
        #expect(mrSmith.schools == [schoolA, schoolB])

        #expect(mrSmith.remove(\.schools, relation: schoolA))
        #expect(mrSmith.schools == [schoolB])
        #expect(schoolA.teacher == nil)
        #expect(!mrSmith.remove(\.schools, relation: schoolA))
        #expect(!mrSmith.remove(\.schools, relation: nil as School?))
        #expect(!mrSmith.remove(\.schools, relation: [schoolA]))
        #expect(mrSmith.remove(\.schools, relation: [schoolA, schoolB]))
        #expect(mrSmith.schools.isEmpty && schoolB.teacher == nil)
    }

    @Test func orderedToManyRelationshipsKeepTheirOrder() throws {
        let teacher = Teacher(context: viewContext)
        let math = Course(context: viewContext)
        let art = Course(context: viewContext)
        let music = Course(context: viewContext)
        #expect(teacher.add(\.courses, relation: math))
        #expect(!teacher.add(\.courses, relation: math))
        #expect(!teacher.add(\.courses, relation: nil as Course?))
        #expect(teacher.add(\.courses, relation: [music, math, art]))
        #expect(teacher.courses == [math, music, art])
        #expect(art.teachers == [teacher])
        #expect(!teacher.add(\.courses, relation: [art, music]))
        #expect(teacher.remove(\.courses, relation: music))
        #expect(teacher.courses == [math, art] && music.teachers.isEmpty)
        #expect(!teacher.remove(\.courses, relation: music))
        try viewContext.save()
        let reader = stack.backgroundContext(author: "reader")
        let saved = try reader.existing(Teacher.self, withID: teacher.objectID)
        #expect(saved.courses.map(\.objectID) == [math.objectID, art.objectID])
    }
}
