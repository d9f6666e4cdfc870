import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk exchange-rates …`: what each currency is worth in US dollars, for adding sales up in the money charts.
struct ExchangeRatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange-rates",
        abstract: "Show or set the exchange rates (US dollars per unit) the money charts convert sales with.",
        subcommands: [List.self, Set.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The configured rates, each from its date.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.exchangeRates.path())
                try connection.print(answer) { answer in
                    let list = try answer.decode(ExchangeRateList.self)
                    var table = TextTable("CURRENCY", "FROM", "USD PER UNIT")
                    for rate in list.rates {
                        table.add(
                            rate.currency, ISO8601DateFormatter().string(from: rate.effectiveFrom), rate.usdPerUnit)
                    }
                    return list.rates.isEmpty ? ["No exchange rates: sales show in their own currencies."] : table.lines
                }
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set what one unit of a currency is worth in US dollars, from a date on (now by default).",
            discussion: "Example: kiosk exchange-rates set GBP 1.27 --from 2026-11-01")
        @Argument(help: "The currency, e.g. GBP.") var currency: String
        @Argument(help: "US dollars per unit, at most six decimals, e.g. 1.27.") var usdPerUnit: String
        @Option(help: "The first day (UTC) or ISO 8601 date-time the rate applies.") var from: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            var body: [String: Any] = ["usdPerUnit": usdPerUnit]
            if let from {
                guard let date = TaxCommand.instant(from) else {
                    throw ValidationError(
                        "--from is a day such as 2027-01-01 or a date-time such as 2027-01-01T00:00:00Z.")
                }
                body["effectiveFrom"] = ISO8601DateFormatter().string(from: date)
            }
            try await reportingErrors(flags: ["usdPerUnit": "<usd-per-unit>"]) {
                let answer = try await connection.client.put(
                    AdminRoutes.exchangeRate.path(currency), raw: try JSONBody(body))
                try connection.print(answer) { answer in
                    let rate = try answer.decode(ExchangeRateResource.self)
                    return [
                        "1 \(rate.currency) = \(rate.usdPerUnit) USD from "
                            + ISO8601DateFormatter().string(from: rate.effectiveFrom)
                    ]
                }
            }
        }
    }
}
