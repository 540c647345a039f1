import Foundation
import StrataTesting

@testable import Strata

/// A file store of the test movie model in a temporary folder of its own, holding some saved
/// movies. Keep it in a stored property: the folder goes when it is released.
struct MovieLibrary {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init(movies: [(title: String, year: Int16)]) throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
        let context = container.newBackgroundContext()
        for (title, year) in movies { _ = Movie(title: title, year: year, in: context) }
        try context.save()
    }
}

extension Movie {
    convenience init(title: String, year: Int16, in context: ObjectContext) {
        self.init(context: context)
        self.title = title
        self.year = year
    }
}
