import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk test …`: the sandbox test controls (SKTestSession's powers) against a running store.
struct TestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Drive the sandbox: buy for a tester, approve Ask to Buy, make calls fail…",
        subcommands: [
            Buy.self, Payments.self, Approve.self, Decline.self, Resolve.self, Transactions.self, Clear.self,
            DeleteTransaction.self, FailNext.self, Failures.self, Receipt.self, Clock.self, Subscriptions.self,
            Renew.self, Expire.self, FailRenewal.self, Recover.self, AutoRenew.self, RenewalProduct.self,
            PriceIncrease.self, Consent.self, GracePeriod.self,
        ] + refundSubcommands)

    /// `--app` and the connection, shared by every test command.
    struct AppOptions: ParsableArguments {
        @Option(help: "The app's bundle id.") var app: String
        @OptionGroup var connection: ConnectionOptions

        var client: AdminClient { connection.client.testControls }
        var path: String { "/apps/\(app.pathEscaped)" }
    }

    struct Buy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Buy a product for a tester, as if started outside the app (prints the signed transaction).")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String
        @Option(help: "The product id.") var product: String
        @Option(help: "How many (consumables: 1–10).") var quantity = 1
        @Flag(help: "Make it a promoted purchase: the app's delegate decides whether to add the payment.")
        var promoted = false
        @Option(help: "A one-time offer code to redeem with the purchase (auto-renewables).") var offerCode: String?

        func run() async throws {
            try await reportingErrors {
                let body = TestPurchaseRequest(
                    tester: tester, productId: product, quantity: quantity, promoted: promoted ? true : nil,
                    offerCode: offerCode)
                let answer = try await options.client.post(
                    options.path + "/purchases", raw: try JSONEncoder().encode(body))
                try options.connection.print(answer) { answer in
                    let entry = try answer.decode(QueueEntry.self)
                    guard let transaction = entry.transaction else {
                        return [
                            "Offered \(entry.productId) × \(entry.quantity) to \(tester) as a promoted purchase "
                                + "(queue entry \(entry.sequence))."
                        ]
                    }
                    return [
                        "Transaction: \(transaction.transactionId)",
                        "Product:     \(entry.productId) × \(entry.quantity)",
                        "Signed transaction:", transaction.signedTransaction,
                    ]
                }
            }
        }
    }

    struct Payments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List payments (e.g. those waiting for Ask to Buy).")
        @OptionGroup var options: AppOptions
        @Option(help: "Only this tester's payments.") var tester: String?
        @Option(help: "Only payments in this state: deferred, interrupted, purchased, failed.") var state: String?

        func run() async throws {
            try await reportingErrors {
                var query: [String: String] = [:]
                if let tester { query["tester"] = tester }
                if let state { query["state"] = state }
                let answer = try await options.client.get(options.path + "/payments", query: query)
                try options.connection.print(answer) { answer in
                    var table = TextTable("PAYMENT", "TESTER", "PRODUCT", "QTY", "STATE", "TRANSACTION")
                    for payment in try answer.decode(TestPaymentsResponse.self).payments {
                        table.add(
                            payment.paymentId.uuidString.lowercased(), payment.tester, payment.productId,
                            String(payment.quantity), payment.state, payment.transactionId ?? "-")
                    }
                    return table.lines
                }
            }
        }
    }

    /// Approve, decline or resolve one waiting payment.
    static func decide(_ decision: String, paymentId: String, options: AppOptions) async throws {
        try await reportingErrors {
            let answer = try await options.client.post(options.path + "/payments/\(paymentId.pathEscaped)/\(decision)")
            try options.connection.print(answer) { answer in
                let entry = try answer.decode(QueueEntry.self)
                return [
                    "Payment \(paymentId) is now \(entry.state.rawValue)"
                        + (entry.transaction.map { " (transaction \($0.transactionId))." } ?? ".")
                ]
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve an Ask to Buy payment: it is charged.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The payment id (see `kiosk test payments`).") var paymentId: String
        func run() async throws { try await TestCommand.decide("approve", paymentId: paymentId, options: options) }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decline an Ask to Buy payment: it fails.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The payment id (see `kiosk test payments`).") var paymentId: String
        func run() async throws { try await TestCommand.decide("decline", paymentId: paymentId, options: options) }
    }

    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resolve an interrupted purchase: it is charged.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The payment id (see `kiosk test payments`).") var paymentId: String
        func run() async throws { try await TestCommand.decide("resolve", paymentId: paymentId, options: options) }
    }

    struct Transactions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tester's transactions in the app.")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.get(options.path + "/transactions", query: ["tester": tester])
                try options.connection.print(answer) { answer in
                    var table = TextTable("TRANSACTION", "PRODUCT", "QTY", "PRICE", "FINISHED")
                    for transaction in try answer.decode(TestTransactionsResponse.self).transactions {
                        let currency = transaction.currency
                        table.add(
                            transaction.transactionId, transaction.productId, String(transaction.quantity),
                            "\(transaction.price) (minor units of \(currency))", transaction.finished ? "yes" : "no")
                    }
                    return table.lines
                }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every transaction, payment and queue entry of a tester in the app.")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.delete(options.path + "/transactions", query: ["tester": tester])
                try options.connection.print(answer) { answer in
                    ["Deleted \(try answer.decode(TestDeletedResponse.self).deleted) transaction(s) of \(tester)."]
                }
            }
        }
    }

    struct DeleteTransaction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-transaction", abstract: "Delete one sandbox transaction.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.delete(
                    options.path + "/transactions/\(transactionId.pathEscaped)")
                try options.connection.print(answer) { _ in ["Deleted transaction \(transactionId)."] }
            }
        }
    }

    struct FailNext: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fail-next", abstract: "Make the next calls of one client API fail with an SKError.")
        @OptionGroup var options: AppOptions
        @Option(help: "products, purchase, restore, receipt or verifyReceipt.") var api: String
        @Option(help: "How many calls fail (0 disarms).") var count = 1
        @Option(
            help:
                "The SKError code name, e.g. cloudServiceNetworkConnectionFailed; for verifyReceipt a status: 21005, 21009, 21100–21199."
        )
        var error = StoreKitErrorCode.unknown.name

        func run() async throws {
            try await reportingErrors {
                let body = TestFailureRequest(api: api, count: count, error: error)
                let answer = try await options.client.put(
                    options.path + "/failures", raw: try JSONEncoder().encode(body))
                try options.connection.print(answer) { _ in
                    [
                        count == 0
                            ? "Calls of \(api) work again."
                            : api == "verifyReceipt"
                                ? "The next \(count) call(s) of verifyReceipt answer status \(error)."
                                : "The next \(count) call(s) of \(api) fail with SKError.\(error)."
                    ]
                }
            }
        }
    }

    struct Failures: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the failures armed in the app.")
        @OptionGroup var options: AppOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.get(options.path + "/failures")
                try options.connection.print(answer) { answer in
                    var table = TextTable("API", "REMAINING", "ERROR")
                    for failure in try answer.decode(TestFailureResponse.self).failures {
                        table.add(failure.api, String(failure.count), failure.error)
                    }
                    return table.lines
                }
            }
        }
    }

    struct Receipt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a tester's app receipt for the app, base64 (what appStoreReceiptURL holds).")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String
        @Option(help: "The device id whose hash the receipt carries (default: all zeros).") var deviceId: String?

        func run() async throws {
            try await reportingErrors {
                var query = ["tester": tester]
                if let deviceId { query["deviceId"] = deviceId }
                let answer = try await options.client.get(options.path + "/receipt", query: query)
                try options.connection.print(answer) { [try $0.decode(ReceiptResponse.self).receipt] }
            }
        }
    }
}
