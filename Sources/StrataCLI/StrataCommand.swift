import ArgumentParser

/// The `strata` command-line tool: inspects, queries and maintains Strata stores.
public struct StrataCommand: AsyncParsableCommand {
    /// The command's name, summary and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, query and maintain Strata stores.",
        discussion: """
            STORE is a Strata SQLite file, a postgres:// URL, or a Core Data SQLite file with \
            --model (read-only). Data goes to standard output, messages to standard error. Exit \
            status: 0 success, 1 failure, 2 problems found (check, versions), 64 usage error.

            EXAMPLES (one per command; `strata help COMMAND` shows more):
              strata demo
              strata create Empty.sqlite --model Movies.xcdatamodeld
              strata info Movies.sqlite
              strata query Movies.sqlite Movie --where 'title BEGINSWITH[c] "the"'
              strata export Movies.sqlite --entity Movie --format csv -o movies.csv
              strata import Movies.sqlite movies.ndjson --entity Movie --upsert
              strata watch Movies.sqlite Movie --count
              strata check Movies.sqlite --repair
              strata shell Movies.sqlite
              strata schema Movies.sqlite --format svg -o movies.svg
              strata versions Students.sqlite --model Students.xcdatamodeld
              strata migrate Students.sqlite --model Students.xcdatamodeld --dry-run
              strata import-coredata Library.sqlite --model Library.xcdatamodeld \\
                  --output Library-strata.sqlite
              strata history Movies.sqlite --author importer --json
            """,
        subcommands: [
            DemoCommand.self, CreateCommand.self, InfoCommand.self, QueryCommand.self, ExportCommand.self, ImportCommand.self, WatchCommand.self, CheckCommand.self, ShellCommand.self, SchemaCommand.self, VersionsCommand.self, MigrateCommand.self,
            ImportCoreDataCommand.self, HistoryCommand.self,
            SaveLoopCommand.self, MigrateCrashCommand.self,
        ])

    /// Creates the command; ArgumentParser fills in its options when it parses the arguments.
    public init() {}
}


extension StrataCommand {
    /// Parses the command line and runs the chosen command (the `strata` executable's entry
    /// point; some commands are asynchronous).
    public static func runFromCommandLine() async {
        await main()
    }
}
