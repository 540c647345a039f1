import ArgumentParser

/// The `strata` command-line tool: inspects, queries and maintains Strata stores.
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, query and maintain Strata stores.",
        subcommands: [DemoCommand.self, SchemaCommand.self])
}
