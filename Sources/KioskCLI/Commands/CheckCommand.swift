import ArgumentParser
import Foundation
import KioskCheck
import KioskCore
import KioskMerchant
import KioskProtocol

/// `kiosk check`: plays every life story and notification fault against the developer's own server.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Run your own server through the App Store's life stories and faults, and judge it.",
        discussion: """
            kiosk check init --app BUNDLE_ID --notification-url URL [--probe URL] > check.json
            kiosk check --config check.json [--story NAME ...] [--fault NAME] [--seed N] [--junit FILE] [--json]
            kiosk check --list

            The store (--server / KIOSK_SERVER) sends the app's sandbox notifications to a relay of the check while it
            runs, which passes them to your server and plays the faults; the app's URLs and the sandbox clock are put
            back afterwards. Exit status 0 only when no story failed. docs/check.md has the probe contract.
            """,
        subcommands: [Run.self, Init.self], defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run", abstract: "Play the stories (the default of `kiosk check`).")

        @Option(help: "The check file (JSON; `kiosk check init` writes one).") var config: String?
        @Option(help: "Only this story (repeatable; `--list` lists them).") var story: [String] = []
        @Option(help: "Lay duplicate or concurrent-duplicate on every life story, or run one fault story.")
        var fault: String?
        @Option(help: "The seed the stories' users and keys come from (default: a new one, printed).")
        var seed: UInt64?
        @Option(help: "Also write the verdict as JUnit XML to this file.") var junit: String?
        @Flag(help: "List the stories and faults and exit.") var list = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            if list {
                printList()
                return
            }
            try await reportingErrors(json: connection.json) {
                guard let config else {
                    throw CLIError(
                        message: "Name the check file with --config.",
                        fix: "Write one with `kiosk check init --app BUNDLE_ID --notification-url URL > check.json`.")
                }
                let data: Data
                do { data = try Data(contentsOf: URL(fileURLWithPath: config)) } catch {
                    throw CLIError(message: "Cannot read \(config): \(error.localizedDescription)")
                }
                let client = connection.client
                guard let token = client.token, !token.isEmpty else {
                    throw CLIError(message: "No admin token.", fix: "Pass --token or set KIOSK_ADMIN_TOKEN.")
                }
                let seed = seed ?? UInt64.random(in: 1...999_999)
                let report: CheckReport
                do {
                    let options = CheckOptions(
                        file: try CheckFile.load(data), server: client.server, token: token, storyNames: story,
                        fault: fault, seed: seed, environment: ProcessInfo.processInfo.environment)
                    report = try await CheckRunner.run(options) { line in
                        FileHandle.standardError.write(Data((line + "\n").utf8))
                    }
                } catch let error as CheckError {
                    throw CLIError(message: error.description)
                } catch let error as KioskError {
                    throw CLIError(error)
                }
                if let junit {
                    do { try Data(report.junit.utf8).write(to: URL(fileURLWithPath: junit)) } catch {
                        throw CLIError(message: "Cannot write \(junit): \(error.localizedDescription)")
                    }
                }
                if connection.json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    print(String(decoding: try encoder.encode(report), as: UTF8.self))
                } else {
                    print(report.text)
                }
                if !report.passed { throw ExitCode(1) }
            }
        }

        private func printList() {
            let stories = CheckRunner.catalogue
            let width = stories.map(\.name.count).max() ?? 0
            for kind in ["life", "fault"] {
                print(kind == "life" ? "Life stories:" : "Faults on the notification path:")
                for story in stories where story.kind == kind {
                    print(
                        "  " + story.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + story.summary)
                }
            }
            print("--fault takes: \(CheckRunner.faultNames.joined(separator: ", "))")
        }
    }

    /// `kiosk check init`: a commented check file from the store's catalog.
    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a commented check file for an app, its grants named from the store's catalog.")

        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "Your server's sandbox notification URL.") var notificationURL: String
        @Option(help: "Your server's probe URL (GET {url}/{appAccountToken}).") var probe: String?
        @Option(
            help: """
                A header the probe needs, 'Name: value'; write ${VARIABLE} (quoted) for a secret read from the \
                environment when the check runs.
                """)
        var probeHeader: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let client = connection.client
                let catalog = try await client.get(AdminRoutes.products.path(app)).decode(ProductList.self)
                let groups = try await client.get(AdminRoutes.subscriptionGroups.path(app)).decode(GroupList.self)
                let groupNames = Dictionary(
                    groups.subscriptionGroups.map { ($0.groupId, $0.referenceName) },
                    uniquingKeysWith: { first, _ in first })
                let grants = catalog.products.compactMap { MerchantSetup.derivedProduct($0, groupNames: groupNames) }
                var header: (String, String)?
                if let probeHeader {
                    let parts = probeHeader.split(separator: ":", maxSplits: 1).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                    guard parts.count == 2, !parts[0].isEmpty, probe != nil else {
                        throw CLIError(
                            message: "'\(probeHeader)' is not a header for the probe.", field: "--probe-header",
                            fix: "Write it as 'Authorization: Bearer ${SHOP_ADMIN_TOKEN}', with --probe.")
                    }
                    header = (parts[0], parts[1])
                }
                print(
                    Self.file(
                        bundleId: app, notificationURL: notificationURL, probe: probe, probeHeader: header,
                        grants: grants))
            }
        }

        static func file(
            bundleId: String, notificationURL: String, probe: String?, probeHeader: (String, String)?,
            grants: [MerchantConfiguration.ProductSettings]
        ) -> String {
            func quoted(_ text: String) -> String {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .withoutEscapingSlashes
                return String(decoding: (try? encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
            }
            let headers = probeHeader.map { ", \"headers\": {\(quoted($0.0)): \(quoted($0.1))}" } ?? ""
            let products = grants.map { grant -> String in
                if let balance = grant.balance, let amount = grant.amount {
                    return
                        #"    {"productId": \#(quoted(grant.productId)), "balance": \#(quoted(balance)), "amount": \#(amount)}"#
                }
                return
                    #"    {"productId": \#(quoted(grant.productId)), "entitlement": \#(quoted(grant.entitlement ?? grant.productId))}"#
            }.joined(separator: ",\n")
            return """
                // kiosk check's file (docs/check.md). Lines starting with // are comments.
                {
                  // The app in the store; the check buys its products for sandbox testers it creates.
                  "bundleId": \(quoted(bundleId)),
                  // Where your server takes App Store Server Notifications V2. While the check runs, the store sends
                  // them to the check's relay, which passes them on here (and plays the faults).
                  "notificationURL": \(quoted(notificationURL)),
                  // GET {url}/{appAccountToken}?now=MILLISECONDS answers {"entitlements": [names], "balances": {name: n}}:
                  // what that user holds at the store's sandbox time. Without a probe only the answers are judged.
                  // Headers may name environment variables: "headers": {"Authorization": "Bearer ${SHOP_TOKEN}"}.
                \(probe.map { "  \"probe\": {\"url\": \(quoted($0))\(headers)}," } ?? "  // \"probe\": {\"url\": \"http://127.0.0.1:8090/probe\"},")
                  // The app telling your server about a purchase, as your app does (placeholders: {{signedTransaction}},
                  // {{transactionId}}, {{originalTransactionId}}, {{productId}}, {{appAccountToken}}, {{receiptData}}):
                  // "purchaseCall": {"url": "http://127.0.0.1:8090/purchases", "method": "POST",
                  //   "body": "{\\"signedTransaction\\": \\"{{signedTransaction}}\\", \\"appAccountToken\\": \\"{{appAccountToken}}\\"}"},
                  // Asks your server to look for what it missed (Get Notification History) for {{appAccountToken}}:
                  // "reconcileCall": {"url": "http://127.0.0.1:8090/reconcile", "method": "POST", "body": "{}"},
                  // Seconds your server may take to answer a notification (Apple's limit: 5).
                  "answerWithin": 5,
                  // What each product grants on your server: an entitlement, or an amount of a balance per unit.
                  "products": [
                \(products)
                  ]
                }
                """
        }
    }
}
