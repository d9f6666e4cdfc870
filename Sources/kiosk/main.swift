import KioskCLI
await KioskCommand.main()
