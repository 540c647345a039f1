import ArgumentParser
import Foundation
import Strata

/// `strata query STORE ENTITY`: the objects of an entity that match a predicate, or their
/// count and aggregates.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fetch objects, counts and aggregates with a predicate.",
        discussion: """
            Predicates use Core Data's format-string language (BEGINSWITH[c], CONTAINS, IN, \
            ANY, SUBQUERY, @count …) with key paths through relationships. Results print as an \
            aligned table on a terminal and as NDJSON otherwise; --format chooses. Without \
            --select, each row shows the object's id (_id), its attributes, and the ids of the \
            objects its to-one relationships hold.

            Examples:
              strata query Movies.sqlite Movie --where 'title BEGINSWITH[c] "the"' \\
                  --sort -releaseDate --limit 20
              strata query Movies.sqlite Movie --where 'director.name == "Michael Mann"' \\
                  --select title,releaseDate
              strata query Movies.sqlite Movie --count --where 'reviews.@count > 3'
              strata query Movies.sqlite Movie --group-by director.name --sum boxOffice \\
                  --sort -director.name
              strata query 'postgres://localhost/movies' Movie --avg boxOffice --json
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: ArgumentHelp("The entity to fetch.", valueName: "entity"))
    var entity: String

    @OptionGroup var query: QueryOptions

    @Option(help: "The output format: table, json, ndjson or csv (default: table on a terminal, ndjson otherwise).")
    var format: OutputFormat?

    @Flag(help: "Print JSON (--format json).")
    var json = false

    @Flag(help: "Print CSV (--format csv).")
    var csv = false

    func run() throws {
        try reportingErrors {
            let store = try OpenedStore.open(storeOptions)
            defer { store.close() }
            let query = try StoreQuery(entityName: entity, options: query, store: store)
            let output = OutputChannel.standardOutput
            var writer = OutputFormat.resolve(format, json: json, csv: csv, for: output).makeWriter(on: output)
            try query.run(on: store, into: &writer)
        }
    }
}
