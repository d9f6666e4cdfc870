import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk tax …`: how each storefront taxes its prices, which decides the proceeds of every sale.
struct TaxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tax",
        abstract: "Show or set each storefront's tax (in the price or added at checkout, and its rate).",
        subcommands: [List.self, Set.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The rule in force in every storefront, and your rules with their dates.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.taxRules.path())
                try connection.print(answer) { answer in
                    let list = try answer.decode(TaxRuleList.self)
                    var table = TextTable("STOREFRONT", "TAX", "RATE", "SOURCE")
                    for rule in list.inForce {
                        table.add(
                            rule.storefront, rule.pricesIncludeTax ? "in price" : "on top",
                            TaxCommand.percent(rule.rateBasisPoints),
                            list.configured.contains(rule) ? "yours" : "default")
                    }
                    var lines = table.lines
                    if !list.configured.isEmpty {
                        lines.append("")
                        var rules = TextTable("STOREFRONT", "FROM", "TAX", "RATE")
                        for rule in list.configured {
                            rules.add(
                                rule.storefront, ISO8601DateFormatter().string(from: rule.effectiveFrom),
                                rule.pricesIncludeTax ? "in price" : "on top", TaxCommand.percent(rule.rateBasisPoints))
                        }
                        lines += rules.lines
                    }
                    return lines
                }
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a storefront's tax from a date on (now by default); sales already made keep theirs.",
            discussion: "Example: kiosk tax set GBR --rate 20% ; kiosk tax set CAN --rate 5 --on-top --from 2027-01-01")
        @Argument(help: "The storefront's three-letter code, e.g. GBR.") var storefront: String
        @Option(help: "The rate in percent, up to two decimals: 20, 8.1 or 20%.") var rate: String
        @Flag(help: "The tax is added at checkout (as in the United States and Canada), not included in the price.")
        var onTop = false
        @Option(help: "The first day (UTC) or ISO 8601 date-time the rule applies.") var from: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            guard let basisPoints = TaxCommand.basisPoints(rate) else {
                throw ValidationError(
                    "--rate is a percentage from 0 to 100 with at most two decimals, such as 20 or 8.1.")
            }
            var body: [String: Any] = ["pricesIncludeTax": !onTop, "rateBasisPoints": basisPoints]
            if let from {
                guard let date = TaxCommand.instant(from) else {
                    throw ValidationError(
                        "--from is a day such as 2027-01-01 or a date-time such as 2027-01-01T00:00:00Z.")
                }
                body["effectiveFrom"] = ISO8601DateFormatter().string(from: date)
            }
            try await reportingErrors {
                let answer = try await connection.client.put(
                    AdminRoutes.taxRule.path(storefront), raw: try JSONBody(body))
                try connection.print(answer) { answer in
                    let rule = try answer.decode(TaxRule.self)
                    return [
                        "\(rule.storefront): \(TaxCommand.percent(rule.rateBasisPoints)) "
                            + "\(rule.pricesIncludeTax ? "included in prices" : "added at checkout") from "
                            + ISO8601DateFormatter().string(from: rule.effectiveFrom)
                    ]
                }
            }
        }
    }

    /// "20", "8.1", "20%" or "25.50" as basis points; nil for anything else or above 100%.
    static func basisPoints(_ text: String) -> Int? {
        let number = text.hasSuffix("%") ? text.dropLast() : Substring(text)
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        let digitsOnly = parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        guard digitsOnly, (1...2).contains(parts.count), parts[0].count <= 3, let whole = Int(parts[0]) else {
            return nil
        }
        let decimals = parts.count == 2 ? parts[1] : "00"
        guard decimals.count <= 2, let fraction = Int(decimals.count == 1 ? decimals + "0" : decimals) else {
            return nil
        }
        let value = whole * 100 + fraction
        return TaxRule.rateRange.contains(value) ? value : nil
    }

    /// Basis points as a percentage: 2000 → "20%", 810 → "8.1%", 2550 → "25.5%".
    static func percent(_ basisPoints: Int) -> String {
        let whole = basisPoints / 100
        let fraction = basisPoints % 100
        guard fraction != 0 else { return "\(whole)%" }
        let digits = fraction % 10 == 0 ? "\(fraction / 10)" : (fraction < 10 ? "0\(fraction)" : "\(fraction)")
        return "\(whole).\(digits)%"
    }

    /// A day (its start in UTC) or an ISO 8601 date-time.
    static func instant(_ text: String) -> Date? {
        ISO8601DateFormatter().date(from: text.count == 10 ? text + "T00:00:00Z" : text)
    }
}
