import Foundation
import Strata

struct Location: Codable, Hashable, Sendable {
    var latitude: Double
    var longitude: Double
}

@Entity final class Movie: ManagedObject {
    @Attribute(.unique) var id: UUID = UUID()
    @Attribute(minimumLength: 1, maximumLength: 100) var title: String = ""
    var releaseDate: Date?
    @Attribute(minimumValue: 1888, maximumValue: 2100) var year: Int16 = 1999
    var boxOffice: Decimal = 0
    var rating: Double = 0
    var tags: [String] = []
    @Attribute(.codable) var location: Location?
    @Relationship(deleteRule: .cascade, inverse: \Review.movie) var reviews: Set<Review> = []
    @Relationship(inverse: \Person.directed) var director: Person?
    @Relationship(inverse: \Person.actedIn) var cast: [Person] = []
    @Transient var cache: Int = 0
    var loudTitle: String { title.uppercased() }

    #Unique<Movie>([\.title, \.releaseDate])
    #Index<Movie>([\.title], [\.releaseDate, \.title])

    convenience init(title: String, year: Int16) {
        self.init()
        self.title = title
        self.year = year
    }
}

@Entity final class Review: ManagedObject {
    var text: String = ""
    @Attribute(minimumValue: 0, maximumValue: 5) var stars: Int32 = 3
    var movie: Movie?
}

@Entity final class Person: ManagedObject {
    var name: String = ""
    var directed: Set<Movie> = []
    var actedIn: Set<Movie> = []
}

@Entity(.abstract) class Vehicle: ManagedObject {
    var wheels: Int = 4
    var maker: String = ""
}

@Entity final class Car: Vehicle {
    var seats: Int16 = 5
}

@Entity final class Bike: Vehicle {
    var isElectric: Bool = false
}

@Entity final class Sample: ManagedObject {
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var int: Int = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var string: String = ""
    var bool: Bool = false
    var date: Date = Date(timeIntervalSince1970: 0)
    @Attribute(.externalStorage) var data: Data = Data()
    var uuid: UUID = UUID()
    var url: URL = URL(fileURLWithPath: "/tmp")
    var location: Location = Location(latitude: 0, longitude: 0)
    var optionalString: String?
    @Attribute(.preserveValueOnDeletion, originalName: "oldNote") var note: String?
    @Attribute(.transient) var scratch: String?
    @Attribute(.indexed, pattern: "[a-z]+") var code: String = "abc"
}
