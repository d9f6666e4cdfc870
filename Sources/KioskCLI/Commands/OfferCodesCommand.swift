import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk offer-codes …`: one-time offer codes for auto-renewable subscriptions.
struct OfferCodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offer-codes", abstract: "Create and list one-time offer codes.",
        subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand, FieldFlags {
        static let configuration = CommandConfiguration(
            abstract: "Create one-time offer codes for an auto-renewable product (prints the codes).")
        static let fieldFlags = ["referenceName": "--name"]
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "The auto-renewable product id.") var product: String
        @Option(help: "The offer's reference name (the redeemed transaction's offerIdentifier).") var name: String
        @Option(help: "How many codes, 1–1000.") var count: Int
        @Option(help: "free_trial, pay_as_you_go or pay_up_front.") var paymentMode = "free_trial"
        @Option(help: "The offer period, an ISO 8601 duration such as P1M.") var period = "P1M"
        @Option(help: "How many periods (pay_as_you_go: 1–12; otherwise 1).") var periods = 1
        @Option(help: "The price tier of each period (1–20); not for free trials.") var tier: Int?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                var body: [String: Any] = [
                    "productId": product, "referenceName": name, "paymentMode": paymentMode, "period": period,
                    "numberOfPeriods": periods, "count": count,
                ]
                if let tier { body["pricing"] = ["tier": tier, "customPrices": [String: Int]()] }
                let answer = try await connection.client.post(
                    AdminRoutes.offerCodes.path(app), raw: try JSONBody(body))
                try connection.print(answer) { answer in
                    let codes = try answer.decode(OfferCodeList.self).offerCodes
                    return ["Created \(codes.count) offer code(s) for \(product) ('\(name)'):"] + codes.map(\.code)
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's offer codes and their state.")
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "Only the codes of this product.") var product: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.offerCodes.path(app), query: product.map { ["productId": $0] } ?? [:])
                try connection.print(answer) { answer in
                    var table = TextTable("CODE", "PRODUCT", "NAME", "MODE", "PERIOD", "STATE", "TRANSACTION")
                    for code in try answer.decode(OfferCodeList.self).offerCodes {
                        table.add(
                            code.code, code.productId, code.referenceName, code.paymentMode.rawValue,
                            "\(code.numberOfPeriods) × \(code.period)", code.state,
                            code.transactionId.map(String.init) ?? "")
                    }
                    return table.lines
                }
            }
        }
    }
}
