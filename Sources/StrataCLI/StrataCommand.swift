import ArgumentParser

/// The `strata` command-line tool: inspects, queries and maintains Strata stores.
public struct StrataCommand: AsyncParsableCommand {
    /// The command's name, summary and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, query and maintain Strata stores.",
        subcommands: [
            DemoCommand.self, InfoCommand.self, QueryCommand.self, ExportCommand.self, WatchCommand.self, CheckCommand.self, ShellCommand.self, SchemaCommand.self, VersionsCommand.self, MigrateCommand.self,
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
