import ArgumentParser

/// The `kiosk` command line.
public struct KioskCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(commandName: "kiosk", abstract: "A self-hosted in-app purchase store.")
    public init() {}
}
