import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk test refund|decline-refund|reverse-refund|revoke|request-refund|notifications|resend-notification|
/// rescind-consent`: refunds and revocations of sandbox transactions, the app's server notifications, and a
/// parent's withdrawal of consent.
extension TestCommand {
    static let refundSubcommands: [any ParsableCommand.Type] = [
        Refund.self, DeclineRefund.self, ReverseRefund.self, Revoke.self, RequestRefund.self, Notifications.self,
        ResendNotification.self, RescindConsent.self,
    ]

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refund a sandbox transaction (REFUND): in full, or a percentage of its price.")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: TransactionChoice
        @Option(help: "0 (other) or 1 (an issue in the app).") var reason = 0
        @Option(help: "Refund this share of the price, 1–100 (prorated); full when left out.") var percentage: Int?

        func run() async throws {
            try await revise(self, "refund", body: RefundRequest(reason: reason, percentage: percentage))
        }
    }

    struct DeclineRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decline-refund", abstract: "Turn down a refund of a sandbox transaction (REFUND_DECLINED).")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: TransactionChoice

        func run() async throws { try await revise(self, "decline-refund") }
    }

    struct ReverseRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reverse-refund", abstract: "Take back a refund (REFUND_REVERSED): the purchase counts again.")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: TransactionChoice

        func run() async throws { try await revise(self, "reverse-refund") }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a purchase from a family member, Family Sharing stopped (REVOKE).")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: TransactionChoice

        func run() async throws { try await revise(self, "revoke") }
    }

    struct RequestRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "request-refund",
            abstract: "The customer asks for a refund of a consumable or subscription (CONSUMPTION_REQUEST).")
        @OptionGroup var options: AppOptions
        @OptionGroup var choice: TransactionChoice
        @Option(help: "UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL or OTHER.")
        var reason = "OTHER"

        func run() async throws {
            try await revise(self, "request-refund", body: TestRefundRequestRequest(reason: reason))
        }
    }

    struct Notifications: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The app's latest server notifications and how their delivery stands.")
        @OptionGroup var options: AppOptions
        @Option(help: "sandbox or production.") var environment = "sandbox"

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.get(
                    TestControlRoutes.notifications.path(options.app), query: ["environment": environment])
                try options.connection.print(answer) { answer in
                    let listed = try answer.decode(TestNotificationsResponse.self).notifications
                    if listed.isEmpty { return ["No \(environment) notifications."] }
                    return listed.map { notification in
                        let type = [notification.notificationType.rawValue, notification.subtype?.rawValue].compactMap {
                            $0
                        }
                        .joined(separator: "/")
                        let next =
                            notification.nextAttemptDate.map {
                                ", next attempt "
                                    + ISO8601DateFormatter().string(
                                        from: Date(timeIntervalSince1970: Double($0) / 1000))
                            } ?? ""
                        return "\(notification.notificationUUID)  \(type)  \(notification.state), "
                            + "\(notification.attempts) attempt(s)\(next)"
                    }
                }
            }
        }
    }

    struct ResendNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resend-notification",
            abstract: "Send a notification (either environment) again now: the same payload, signed again.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The notification's UUID (`kiosk test notifications`).") var uuid: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.post(
                    TestControlRoutes.resendNotification.path(options.app, uuid))
                try options.connection.print(answer) { answer in
                    let notification = try answer.decode(TestNotificationInfo.self)
                    let outcome =
                        switch notification.state {
                        case "delivered": "the app's server accepted it"
                        case "unconfigured": "not sent: the app has no notification URL for it"
                        default: "the app's server did not accept it (\(notification.state))"
                        }
                    let attempts = notification.attempts
                    return [
                        "Sent \(notification.notificationType) \(notification.notificationUUID) again: \(outcome); "
                            + "\(attempts) attempt\(attempts == 1 ? "" : "s") in all."
                    ]
                }
            }
        }
    }
}

extension TestCommand {
    struct RescindConsent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rescind-consent",
            abstract: "A parent withdraws consent for a (child) tester's use of the app: RESCIND_CONSENT.")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.post(
                    TestControlRoutes.rescindConsent.path(options.app),
                    raw: try JSONEncoder().encode(TestConsentRequest(tester: tester)))
                try options.connection.print(answer) { answer in
                    let consent = try answer.decode(TestConsentResponse.self)
                    let notification = consent.notification
                    let what =
                        consent.rescinded
                        ? "Withdrew consent for \(consent.tester) in \(options.app) (app transaction "
                            + "\(consent.appTransactionId))."
                        : "Consent for \(consent.tester) in \(options.app) was already withdrawn; nothing was sent again."
                    let sent =
                        switch notification.state {
                        case "unconfigured":
                            "RESCIND_CONSENT \(notification.notificationUUID) was recorded but not sent: the app has no "
                                + "sandbox notification URL (kiosk apps update \(options.app) "
                                + "--sandbox-notification-url URL)."
                        case "delivered": "RESCIND_CONSENT \(notification.notificationUUID) was delivered."
                        default:
                            "RESCIND_CONSENT \(notification.notificationUUID) is \(notification.state) "
                                + "(\(notification.attempts) attempt(s) so far); `kiosk test notifications --app "
                                + "\(options.app)` shows its delivery."
                        }
                    return [what, sent]
                }
            }
        }
    }
}

/// A refund or revocation command: its app and the transaction it acts on.
protocol TransactionControl: ParsableArguments {
    var options: TestCommand.AppOptions { get }
    var choice: TestCommand.TransactionChoice { get }
}

extension TestCommand.Refund: TransactionControl {}
extension TestCommand.DeclineRefund: TransactionControl {}
extension TestCommand.ReverseRefund: TransactionControl {}
extension TestCommand.Revoke: TransactionControl {}
extension TestCommand.RequestRefund: TransactionControl {}

extension TestCommand {
    /// The transaction a refund or revocation acts on: its id, or a tester's latest purchase of a product, so a
    /// script need not look the id up.
    struct TransactionChoice: ParsableArguments {
        @Argument(help: "The transaction id (or give --tester and --product).") var transactionId: String?
        @Option(help: "With --product: act on this sandbox tester's latest transaction of the product.")
        var tester: String?
        @Option(help: "With --tester: the product.") var product: String?

        /// The transaction id given, or the one `--tester` and `--product` name.
        func transactionId(in options: AppOptions) async throws -> String {
            switch (transactionId, tester, product) {
            case (let id?, nil, nil):
                return id
            case (nil, let tester?, let product?):
                let answer = try await options.client.get(
                    TestControlRoutes.transactions.path(options.app), query: ["tester": tester])
                let latest = try answer.decode(TestTransactionsResponse.self).transactions
                    .filter { $0.productId == product }
                    .max {
                        ($0.purchaseDate, $0.transactionId.count, $0.transactionId) < (
                            $1.purchaseDate, $1.transactionId.count, $1.transactionId
                        )
                    }
                guard let latest else {
                    throw CLIError(
                        message: "\(tester) has no transaction of \(product) in \(options.app).", field: "--product",
                        fix: "List them with `kiosk test transactions --app \(options.app) --tester \(tester)`.")
                }
                return latest.transactionId
            default:
                throw CLIError(
                    message: "Name the transaction: its id, or --tester and --product (not both).",
                    field: transactionId == nil ? "--tester/--product" : "<transaction-id>",
                    fix: "E.g. `--tester tester@example.com --product com.example.shop.remove_ads`, or an id from "
                        + "`kiosk test transactions`.")
            }
        }
    }
}

/// POSTs a refund or revocation control and prints what it did.
private func revise(_ command: some TransactionControl, _ action: String, body: (any Encodable)? = nil) async throws {
    let options = command.options
    try await command.reportingErrors {
        let transactionId = try await command.choice.transactionId(in: options)
        let answer = try await options.client.post(
            TestControlRoutes.transactionAction.path(options.app, transactionId, action),
            raw: try body.map { try JSONEncoder().encode($0) } ?? Data("{}".utf8))
        try options.connection.print(answer) { answer in
            let revised = try answer.decode(TestRevocationResponse.self)
            return [echo(of: action, revised, app: options.app)]
        }
    }
}

/// What a refund or revocation changed, who hears of it and when, in one line. `environment` is `sandbox` or
/// `production`, the environment of the app's notification URL the store sends to.
func echo(of action: String, _ revised: TestRevocationResponse, app: String, environment: String = "sandbox")
    -> String
{
    let transaction = "transaction \(revised.transactionId) (\(revised.productId))"
    let notified = notificationOutcome(revised, app: app, environment: environment)
    let devices = "its devices see it revoked at their next sync (AppStore.sync, or at once if listening)"
    switch action {
    case "refund":
        let how = revised.revocationType == .refundProrated ? "in part" : "in full"
        let amount =
            revised.currency.map { Currency.text(minorUnits: revised.refundedMinorUnits, code: $0) }
            ?? "\(revised.refundedMinorUnits) in minor units"
        return "Refunded \(transaction) \(how), \(amount), reason "
            + "\(revised.revocationReason ?? 0): \(devices); \(notified)"
    case "revoke":
        return "Revoked \(transaction) from a family member: \(devices); \(notified)"
    case "reverse-refund":
        return "Reversed the refund of \(transaction): it counts again and comes back to its devices as unfinished; "
            + notified
    case "decline-refund":
        return "Declined the refund of \(transaction): nothing changes for the customer; \(notified)"
    default:
        return "The customer asked for a refund of \(transaction): \(notified) Answer it with the Server API's "
            + "Send Consumption Information."
    }
}

/// What became of the notification a refund or revocation made, as the store's answer says: never "sent" when
/// the app has no notification URL (the store keeps it `unconfigured`, with no attempt).
func notificationOutcome(_ revised: TestRevocationResponse, app: String, environment: String) -> String {
    let notification = "\(revised.notificationType) (notification \(revised.notificationUUID))"
    let log =
        "`kiosk test notifications --app \(app)\(environment == "sandbox" ? "" : " --environment \(environment)")`"
    switch revised.notificationState {
    case "unconfigured":
        return "\(notification) was not sent: the app has no \(environment) notification URL — set one with "
            + "`kiosk apps update \(app) --\(environment)-notification-url URL` and resend it "
            + "(`kiosk test resend-notification --app \(app) \(revised.notificationUUID)`)."
    case "delivered":
        return "the app's server received \(notification)."
    case "failed":
        let attempts = revised.notificationAttempts ?? 0
        return "\(notification) did not reach the app's server (\(attempts) attempt\(attempts == 1 ? "" : "s")); "
            + "\(log) shows its delivery."
    case "pending":
        return "\(notification) is on its way to the app's server; \(log) shows its delivery."
    default:
        return "the store made \(notification); \(log) shows its delivery."
    }
}
