import StrataCLI

await StrataCommand.runFromCommandLine()
