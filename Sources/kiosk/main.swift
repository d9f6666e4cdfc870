import KioskCLI

await KioskCommand.runFromCommandLine()
