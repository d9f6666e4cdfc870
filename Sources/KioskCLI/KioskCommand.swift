import ArgumentParser
import Foundation

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
            if let unknown = UnknownSubcommand.find(in: Array(CommandLine.arguments.dropFirst())) {
                FileHandle.standardError.write(Data((unknown.error.description + "\n").utf8))
                exit(withError: ExitCode.validationFailure)
            }
            exit(withError: error)
        }
    }
}

/// A word where a command expects one of its subcommands, and the subcommand it most likely meant.
///
/// ArgumentParser reads a mistyped subcommand (`kiosk test refnd --app …`) as an argument of the command above it,
/// and then fails on the first option that command lacks ("Unknown option '--app'"), which names neither the word
/// at fault nor what was meant. When parsing failed, this walks the words the way ArgumentParser does and names
/// the first one that is no subcommand where only subcommands can follow.
struct UnknownSubcommand {
    /// The commands before the word, `kiosk test`.
    var path: [String]
    var word: String
    /// The subcommand nearest the word by edit distance, when one is near enough to be a typo.
    var suggestion: String?
    /// Every subcommand of the command.
    var subcommands: [String]

    /// The first word of `arguments` that is no subcommand where only a subcommand may follow, if any.
    static func find(in arguments: [String], root: any ParsableCommand.Type = KioskCommand.self) -> UnknownSubcommand? {
        var command = root
        var path = [root._commandName]
        for word in arguments {
            let configuration = command.configuration
            // Options, or a command that takes words of its own, leave the error to ArgumentParser.
            if word.hasPrefix("-") || configuration.subcommands.isEmpty || configuration.defaultSubcommand != nil {
                return nil
            }
            let next = configuration.subcommands.first {
                $0._commandName == word || $0.configuration.aliases.contains(word)
            }
            if let next {
                command = next
                path.append(word)
                continue
            }
            let names = configuration.subcommands.map { $0._commandName }
            return UnknownSubcommand(
                path: path, word: word, suggestion: nearest(to: word, among: names), subcommands: names)
        }
        return nil
    }

    /// The name nearest `word` when it is near enough to be a typo of it.
    static func nearest(to word: String, among names: [String]) -> String? {
        var best: String?
        var bestDistance = Int.max
        for name in names {
            let distance = Self.distance(word, name)
            if distance < bestDistance {
                best = name
                bestDistance = distance
            }
        }
        return bestDistance <= max(2, word.count / 3) ? best : nil
    }

    var error: CLIError {
        let command = path.joined(separator: " ")
        let fix =
            suggestion.map { "Did you mean `\(command) \($0)`? `\(command) --help` lists them all." }
            ?? "Use one of: \(subcommands.joined(separator: ", ")) (`\(command) --help` says what each does)."
        return CLIError(message: "'\(word)' is not a subcommand of `\(command)`.", field: word, fix: fix)
    }

    /// The Levenshtein distance between two words: the fewest insertions, deletions and substitutions that turn
    /// one into the other.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(
                    previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
