import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk reports …`: App Store Connect's reports, in Apple's formats, from the production store's money events.
struct ReportsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reports", abstract: "Download sales reports in App Store Connect's formats.",
        subcommands: [Sales.self, SubscriptionEvents.self, Finance.self])

    /// Writes a tab-separated report to `output` (saying how many rows it has) or, without one, to standard output.
    static func deliver(_ report: Data, to output: String?, named name: String) throws {
        guard let output else {
            FileHandle.standardOutput.write(report)
            return
        }
        try report.write(to: URL(fileURLWithPath: output))
        let rows = String(decoding: report, as: UTF8.self).split(separator: "\n").count - 1
        print("Wrote \(name) to \(output) (\(rows) rows)")
    }

    struct Sales: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The Sales Summary report (Sales and Trends), tab-separated as Apple writes it.",
            discussion: """
                Production sales only, by UTC day; units are negative for refunds and amounts are per unit. A period \
                not over yet gives the sales so far. Example: kiosk reports sales --frequency daily --date 2026-11-24
                """)
        @Option(help: "daily, weekly (Monday to Sunday), monthly or yearly.") var frequency: String = "daily"
        @Option(help: "The day (2026-11-24; for weekly, any day of the week), month (2026-11) or year (2026).")
        var date: String
        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                let answer = try await connection.client.get(
                    AdminRoutes.salesReport.path(), query: ["frequency": frequency, "date": date])
                try ReportsCommand.deliver(answer.body, to: output, named: "the \(frequency) sales report of \(date)")
            }
        }
    }

    struct SubscriptionEvents: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "subscription-events",
            abstract: "The Subscription Event report (Sales and Trends) of a day, tab-separated as Apple writes it.",
            discussion: """
                Production only, by UTC day: starts, renewals, conversions from introductory offers, billing retries, \
                cancellations with their reason, upgrades, downgrades, reactivations and refunds, as the store's \
                server notifications told them. Example: kiosk reports subscription-events --date 2026-11-24
                """)
        @Option(help: "The day, such as 2026-11-24.") var date: String
        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                let answer = try await connection.client.get(
                    AdminRoutes.subscriptionEventReport.path(), query: ["date": date])
                try ReportsCommand.deliver(answer.body, to: output, named: "the subscription event report of \(date)")
            }
        }
    }

    struct Finance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The Financial Report of a month and region, tab-separated as Apple writes it.",
            discussion: """
                Production sales only, by calendar month (UTC); regions group storefronts by currency zone (US, EU, \
                GB, JP, AU, CA, CN) or country; ZZ is all of them. Example: kiosk reports finance --month 2026-11 --region US
                """)
        @Option(help: "The month, such as 2026-11.") var month: String
        @Option(help: "A region code such as US, EU or GB; ZZ for all regions.") var region: String = "ZZ"
        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                let answer = try await connection.client.get(
                    AdminRoutes.financeReport.path(), query: ["month": month, "region": region.uppercased()])
                if let output {
                    try answer.body.write(to: URL(fileURLWithPath: output))
                    print("Wrote the \(region.uppercased()) financial report of \(month) to \(output)")
                } else {
                    FileHandle.standardOutput.write(answer.body)
                }
            }
        }
    }
}
