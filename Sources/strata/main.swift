import StrataCLI

StrataCommand.main()
