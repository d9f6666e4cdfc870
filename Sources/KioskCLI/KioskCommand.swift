import ArgumentParser

/// The `kiosk` command line: runs the store and drives its console.
public struct KioskCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kiosk",
        abstract: "Kiosk: a self-hosted in-app purchase store that speaks Apple's protocols.",
        discussion: """
            Start a store with `kiosk serve`; the other commands talk to a running store \
            (--server / KIOSK_SERVER, --token / KIOSK_ADMIN_TOKEN). `kiosk merchant` runs your own server \
            beside it: the merchant that validates purchases and grants them exactly once.
            """,
        version: "0.1.0",
        subcommands: [
            ServeCommand.self, AppsCommand.self, ProductsCommand.self, GroupsCommand.self, CatalogCommand.self,
            AgreementsCommand.self, TestersCommand.self, AccountsCommand.self, KeysCommand.self, ApiKeysCommand.self,
            ConsoleUsersCommand.self,
            CertsCommand.self,
            TestCommand.self, OfferCodesCommand.self, OffersCommand.self, TaxCommand.self, ExchangeRatesCommand.self,
            ReportsCommand.self, RetentionCommand.self,
            MerchantCommand.self, CheckCommand.self,
        ]
    )

    public init() {}
}

extension KioskCommand {
    /// Parses the process's arguments and runs the chosen command, exiting with ArgumentParser's conventions.
    ///
    /// This spells out what `AsyncParsableCommand.main()` does, because from another module overload resolution
    /// picks the synchronous `ParsableCommand.main()`, which refuses asynchronous commands on Linux.
    public static func runFromCommandLine() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
