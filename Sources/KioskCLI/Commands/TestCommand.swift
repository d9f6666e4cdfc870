import ArgumentParser
import Foundation
import KioskCore
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

        var client: AdminClient { connection.client }
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
        @Option(help: "BILLED_UPFRONT (default) or MONTHLY: a one-year subscription's 12-month commitment.")
        var billingPlan: String?

        func run() async throws {
            try await reportingErrors {
                let body = TestPurchaseRequest(
                    tester: tester, productId: product, quantity: quantity, promoted: promoted ? true : nil,
                    offerCode: offerCode, billingPlanType: billingPlan)
                let answer = try await options.client.post(
                    TestControlRoutes.purchases.path(options.app), raw: try JSONEncoder().encode(body))
                try options.connection.print(answer) { answer in
                    let entry = try answer.decode(QueueEntry.self)
                    guard let transaction = entry.transaction else {
                        return [
                            "Offered \(entry.productId) × \(entry.quantity) to \(tester) as a promoted purchase "
                                + "(queue entry \(entry.sequence)): the app's shouldAddStorePayment decides at its next "
                                + "sync (or at once if it is listening); nothing is charged until it adds the payment."
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
                let answer = try await options.client.get(TestControlRoutes.payments.path(options.app), query: query)
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
    /// Approves, declines or resolves a waiting payment and says what became of it.
    static func decide(_ decision: String, _ command: some PaymentDecision) async throws {
        let options = command.options
        try await command.reportingErrors {
            let payment = try await command.choice.payment(
                in: options, waiting: decision == "resolve" ? "interrupted" : "deferred")
            let answer = try await options.client.post(
                TestControlRoutes.paymentDecision.path(options.app, payment, decision))
            try options.connection.print(answer) { answer in
                let entry = try answer.decode(QueueEntry.self)
                guard let transaction = entry.transaction else {
                    return [
                        "Payment \(payment) (\(entry.productId)) is now \(entry.state.rawValue): nothing was charged."
                    ]
                }
                return [
                    "Payment \(payment) (\(entry.productId) × \(entry.quantity)) is now \(entry.state.rawValue): "
                        + "transaction \(transaction.transactionId) was charged; the tester's devices get it at their "
                        + "next sync (or at once if listening)."
                ]
            }
        }
    }

    /// The payment a decision acts on: its id, or a tester's only payment waiting for it.
    struct PaymentChoice: ParsableArguments {
        @Argument(help: "The payment id (see `kiosk test payments`), or give --tester.") var paymentId: String?
        @Option(help: "Act on this sandbox tester's payment that waits (when there is exactly one).")
        var tester: String?

        /// The payment id given, or the tester's one payment in `waiting` state.
        func payment(in options: AppOptions, waiting: String) async throws -> String {
            switch (paymentId, tester) {
            case (let id?, nil):
                return id
            case (nil, let tester?):
                let answer = try await options.client.get(
                    TestControlRoutes.payments.path(options.app), query: ["tester": tester, "state": waiting])
                let payments = try answer.decode(TestPaymentsResponse.self).payments
                guard payments.count == 1, let payment = payments.first else {
                    let listed = payments.map { "\($0.paymentId.uuidString.lowercased()) (\($0.productId))" }
                    throw CLIError(
                        message: payments.isEmpty
                            ? "\(tester) has no \(waiting) payment in \(options.app)."
                            : "\(tester) has \(payments.count) \(waiting) payments: \(listed.joined(separator: ", ")).",
                        field: "--tester",
                        fix: payments.isEmpty
                            ? "List the payments with `kiosk test payments --app \(options.app)`."
                            : "Give the payment id instead of --tester.")
                }
                return payment.paymentId.uuidString.lowercased()
            default:
                throw CLIError(
                    message: "Name the payment: its id or --tester, not both.", field: "--tester",
                    fix: "E.g. `--tester tester@example.com`, or an id from `kiosk test payments`.")
            }
        }
    }

    struct Approve: AsyncParsableCommand, PaymentDecision {
        static let configuration = CommandConfiguration(abstract: "Approve an Ask to Buy payment: it is charged.")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: PaymentChoice
        func run() async throws { try await TestCommand.decide("approve", self) }
    }

    struct Decline: AsyncParsableCommand, PaymentDecision {
        static let configuration = CommandConfiguration(abstract: "Decline an Ask to Buy payment: it fails.")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: PaymentChoice
        func run() async throws { try await TestCommand.decide("decline", self) }
    }

    struct Resolve: AsyncParsableCommand, PaymentDecision {
        static let configuration = CommandConfiguration(abstract: "Resolve an interrupted purchase: it is charged.")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: PaymentChoice
        func run() async throws { try await TestCommand.decide("resolve", self) }
    }

    struct Transactions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tester's transactions in the app.")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.get(
                    TestControlRoutes.transactions.path(options.app), query: ["tester": tester])
                try options.connection.print(answer) { answer in
                    var table = TextTable("TRANSACTION", "PRODUCT", "QTY", "PRICE", "FINISHED")
                    for transaction in try answer.decode(TestTransactionsResponse.self).transactions {
                        table.add(
                            transaction.transactionId, transaction.productId, String(transaction.quantity),
                            Currency.text(minorUnits: transaction.price, code: transaction.currency),
                            transaction.finished ? "yes" : "no")
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
                let answer = try await options.client.delete(
                    TestControlRoutes.transactions.path(options.app), query: ["tester": tester])
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
                    TestControlRoutes.transaction.path(options.app, transactionId))
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
                    TestControlRoutes.failures.path(options.app), raw: try JSONEncoder().encode(body))
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
                let answer = try await options.client.get(TestControlRoutes.failures.path(options.app))
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
                let answer = try await options.client.get(TestControlRoutes.receipt.path(options.app), query: query)
                try options.connection.print(answer) { [try $0.decode(ReceiptResponse.self).receipt] }
            }
        }
    }
}

/// `kiosk test approve|decline|resolve`: its app and the payment it decides.
protocol PaymentDecision: ParsableArguments {
    var options: TestCommand.AppOptions { get }
    var choice: TestCommand.PaymentChoice { get }
}
