import ArgumentParser
import Foundation
import Strata

/// `strata demo`: shows the model layer at work on a sample model.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show Strata at work on a sample model of movies, reviews and people.")

    func run() throws {
        var output = StandardOutput()
        try Self.run(into: &output)
    }

    /// Runs the demo, writing what it shows to `output`.
    static func run(into output: inout some TextOutputStream) throws {
        let schema = try Schema([Movie.self, Director.self, Critic.self], versionIdentifier: "demo")
        print("Schema built from @Entity classes:\n", to: &output)
        print(schema, to: &output)
        if !schema.warnings.isEmpty {
            print("\nWarnings:", to: &output)
            for warning in schema.warnings { print("  - \(warning)", to: &output) }
        }

        print("\nObjects in a context:", to: &output)
        let context = ObjectContext(schema: schema)
        let director = Director(context: context)
        director.name = "Michael Mann"
        director.awards = 2
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.boxOffice = Decimal(string: "187436818.00") ?? 0
        movie.genres = ["crime", "thriller"]
        movie.director = director
        let review = Review(context: context)
        review.text = "A masterpiece of the genre."
        review.stars = 5
        review.movie = movie
        print("  \(movie.title) directed by \(movie.director?.name ?? "?"), \(movie.reviews.count) review(s)", to: &output)
        print("  inverse kept in step: \(director.name) directed \(director.directed.map(\.title))", to: &output)
        print("  inserted objects: \(context.insertedObjects.count), hasChanges: \(context.hasChanges)", to: &output)

        print("\nDynamic access by key (what tools and Xcode-model users get):", to: &output)
        print("  value(forKey: \"title\") = \(try movie.value(forKey: "title") ?? "nil")", to: &output)
        do {
            try movie.setValue(42, forKey: "title")
        } catch let error as StrataError {
            print("  setValue(42, forKey: \"title\") -> \(error.code): \(error.message)", to: &output)
        }
        do {
            try movie.setValue("x", forKey: "titel")
        } catch let error as StrataError {
            print("  setValue(\"x\", forKey: \"titel\") -> \(error.code): \(error.message)", to: &output)
        }

        print("\nValidation before save:", to: &output)
        let empty = Movie(context: context)
        let broken = Review(context: context)
        broken.stars = 9
        for object in [empty, broken] as [ManagedObject] {
            for failure in object.validationFailures() {
                print("  \(failure.code): \(failure.message)", to: &output)
            }
        }

        print("\nA Sendable value snapshot:", to: &output)
        let snapshot = movie.value
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print("  " + String(decoding: try encoder.encode(snapshot), as: UTF8.self), to: &output)

        print("\nThe same model in its stable serialized form is \(schema.serializedRepresentation().count) bytes;", to: &output)
        print("its version hash is \(schema.versionHash).", to: &output)
        print("Persistence (SQLite stores, saves and fetches) arrives with the store layer.", to: &output)
    }
}

/// Standard output as a `TextOutputStream`.
struct StandardOutput: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardOutput.write(Data(string.utf8))
    }
}
