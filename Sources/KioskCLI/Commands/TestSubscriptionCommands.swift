import ArgumentParser
import Foundation
import KioskProtocol

extension TestCommand {
    /// `--app`, `--transaction` and the connection, shared by the commands acting on one subscription.
    struct SubscriptionOptions: ParsableArguments {
        @OptionGroup var app: AppOptions
        @Option(help: "The subscription's original transaction id.") var transaction: String
    }

    /// Runs one subscription test control and prints what it changed, when that takes effect, and the subscription.
    static func control(
        _ action: String, productId: String? = nil, retentionChoice: String? = nil, options: SubscriptionOptions
    ) async throws {
        try await options.reportingErrors(flags: ["retentionChoice": "--retention"]) {
            // Turning auto-renew off runs the retention flow once per command, however often the request is sent.
            let answer = try await options.app.client.post(
                TestControlRoutes.subscription.path(options.app.app, options.transaction),
                raw: try JSONEncoder().encode(
                    TestSubscriptionRequest(
                        action: action, productId: productId, retentionChoice: retentionChoice,
                        requestIdentifier: action == "auto-renew-off" ? UUID() : nil)))
            try options.app.connection.print(answer) { answer in
                let subscription = try answer.decode(TestSubscriptionInfo.self)
                let retention = subscription.retention.map { ["Retention:    \($0.summary)"] } ?? []
                return [echo(of: action, subscription)] + retention + subscriptionLines(subscription)
            }
        }
    }

    /// What `action` did to `subscription`, and when it takes effect, in one line.
    static func echo(of action: String, _ subscription: TestSubscriptionInfo) -> String {
        let periodEnd = date(subscription.expiresDate)
        switch action {
        case "renew": return "Ended the period now: " + outcome(subscription)
        case "expire": return "Expired the subscription now, as if the subscriber had cancelled."
        case "fail-renewal":
            return "Armed: the next renewal, at \(periodEnd), fails with a billing error (then billing retry, or the "
                + "grace period if the app has one)."
        case "recover": return "Retried billing now: " + outcome(subscription)
        case "auto-renew-on": return "Turned auto-renew on: the subscription renews at \(periodEnd)."
        case "auto-renew-off" where subscription.autoRenewStatus:
            return "The subscriber tapped Cancel and kept the subscription: it renews at \(periodEnd)."
        case "auto-renew-off": return "Turned auto-renew off: the subscription expires at \(periodEnd)."
        case "set-auto-renew-product":
            return "The next renewal, at \(periodEnd), renews into \(subscription.autoRenewProductId)."
        case "price-increase":
            return "Asked the subscriber to consent to the current catalog price: pending until they answer "
                + "(`kiosk test consent accept|decline`); without consent the subscription expires at \(periodEnd)."
        case "consent-accept": return "Accepted the price increase: the renewal at \(periodEnd) charges the new price."
        case "consent-decline":
            return "Declined the price increase: the subscription expires at \(periodEnd) and does not renew."
        default: return "Done: \(action)."
        }
    }

    /// Where a period's end left the subscription.
    private static func outcome(_ subscription: TestSubscriptionInfo) -> String {
        switch subscription.state {
        case "active": "it renewed, until \(date(subscription.expiresDate))."
        case "billing_retry": "the renewal failed; billing retry began (`kiosk test recover` retries now)."
        case "grace_period":
            "the renewal failed; the grace period runs until "
                + (subscription.gracePeriodExpiresDate.map(date) ?? "its end") + "."
        case "expired": "the subscription expired."
        default: "the subscription is \(subscription.state)."
        }
    }

    static func subscriptionLines(_ subscription: TestSubscriptionInfo) -> [String] {
        var lines = [
            "Subscription: \(subscription.originalTransactionId) (latest transaction \(subscription.latestTransactionId))",
            "Product:      \(subscription.productId), renews into \(subscription.autoRenewProductId)",
            "State:        \(subscription.state) (status \(subscription.status)), auto-renew "
                + (subscription.autoRenewStatus ? "on" : "off"),
            "Expires:      \(date(subscription.expiresDate))",
        ]
        if let intent = subscription.expirationIntent {
            lines.append("Expiry reason: \(expirationReason(intent)) (expiration intent \(intent))")
        }
        if let status = subscription.priceIncreaseStatus {
            lines.append("Price increase: " + (status == 1 ? "accepted" : "waiting for the subscriber's consent"))
        }
        return lines
    }

    /// Apple's `expirationIntent`, in words.
    static func expirationReason(_ intent: Int) -> String {
        switch intent {
        case 1: "the subscriber cancelled"
        case 2: "a billing error"
        case 3: "the subscriber did not consent to a price increase"
        case 4: "the product was not available at renewal"
        default: "unknown"
        }
    }

    private static func date(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000).ISO8601Format()
    }

    struct Subscriptions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tester's subscriptions in the app.")
        @OptionGroup var options: AppOptions
        @Option(help: "The sandbox tester's email.") var tester: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.get(
                    TestControlRoutes.subscriptions.path(options.app), query: ["tester": tester])
                try options.connection.print(answer) { answer in
                    var table = TextTable("ORIGINAL", "PRODUCT", "STATE", "AUTO-RENEW", "EXPIRES", "RENEWALS")
                    for subscription in try answer.decode(TestSubscriptionsResponse.self).subscriptions {
                        table.add(
                            subscription.originalTransactionId, subscription.productId, subscription.state,
                            subscription.autoRenewStatus ? "on" : "off",
                            Date(timeIntervalSince1970: TimeInterval(subscription.expiresDate) / 1000).ISO8601Format(),
                            String(subscription.renewalCount))
                    }
                    return table.lines
                }
            }
        }
    }

    struct Renew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the current period now: it renews (or expires).")
        @OptionGroup var options: SubscriptionOptions
        func run() async throws { try await TestCommand.control("renew", options: options) }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Expire a subscription now (EXPIRED/VOLUNTARY).")
        @OptionGroup var options: SubscriptionOptions
        func run() async throws { try await TestCommand.control("expire", options: options) }
    }

    struct FailRenewal: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fail-renewal", abstract: "Make the next renewal fail with a billing error.")
        @OptionGroup var options: SubscriptionOptions
        func run() async throws { try await TestCommand.control("fail-renewal", options: options) }
    }

    struct Recover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retry billing now, successfully (DID_RENEW/BILLING_RECOVERY) if the tester's payments work.")
        @OptionGroup var options: SubscriptionOptions
        func run() async throws { try await TestCommand.control("recover", options: options) }
    }

    struct AutoRenew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "auto-renew", abstract: "Turn a subscription's auto-renew on or off.")
        @Argument(help: "on or off.") var setting: String
        @Option(
            help: ArgumentHelp(
                "With off, what the subscriber does with the retention message shown: cancel (confirm) or accept "
                    + "(take the offer or plan switch, or keep the subscription)."))
        var retention: String?
        @OptionGroup var options: SubscriptionOptions

        func run() async throws {
            guard ["on", "off"].contains(setting) else {
                throw ValidationError("Say on or off, not '\(setting)'.")
            }
            try await TestCommand.control("auto-renew-\(setting)", retentionChoice: retention, options: options)
        }
    }

    struct RenewalProduct: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "renewal-product",
            abstract: "Renew into another product of the group at the next renewal (downgrade or crossgrade).")
        @OptionGroup var options: SubscriptionOptions
        @Option(help: "The product the next renewal charges.") var product: String
        func run() async throws {
            try await TestCommand.control("set-auto-renew-product", productId: product, options: options)
        }
    }

    struct PriceIncrease: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "price-increase",
            abstract: "Ask the subscriber to consent to the product's current catalog price (PRICE_INCREASE/PENDING).")
        @OptionGroup var options: SubscriptionOptions
        func run() async throws { try await TestCommand.control("price-increase", options: options) }
    }

    struct Consent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept or decline a pending price increase (declined, it expires at the period end).")
        @Argument(help: "accept or decline.") var answer: String
        @OptionGroup var options: SubscriptionOptions

        func run() async throws {
            guard ["accept", "decline"].contains(answer) else {
                throw ValidationError("Say accept or decline, not '\(answer)'.")
            }
            try await TestCommand.control("consent-\(answer)", options: options)
        }
    }

    struct GracePeriod: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grace-period", abstract: "Show or set the app's billing grace period: 3, 16, 28 days or off.")
        @OptionGroup var options: AppOptions
        @Argument(help: "3, 16, 28 or off; nothing to show it.") var days: String?

        func run() async throws {
            try await reportingErrors {
                let answer: AdminClient.Answer
                if let days {
                    guard days == "off" || Int(days) != nil else {
                        throw CLIError(
                            message: "'\(days)' is not a grace period.", field: "days", fix: "Use 3, 16, 28 or off.")
                    }
                    answer = try await options.client.put(
                        TestControlRoutes.gracePeriod.path(options.app),
                        raw: try JSONEncoder().encode(TestGracePeriod(days: Int(days))))
                } else {
                    answer = try await options.client.get(TestControlRoutes.gracePeriod.path(options.app))
                }
                try options.connection.print(answer) { answer in
                    let days = try answer.decode(TestGracePeriod.self).days
                    var lines = ["Billing grace period: " + (days.map { "\($0) days" } ?? "off")]
                    if self.days != nil {
                        lines.append(
                            days.map {
                                "A renewal that fails from now on keeps the subscriber entitled for \($0) days while "
                                    + "billing is retried (sandbox days pass as fast as the tester's renewal rate)."
                            }
                                ?? "A renewal that fails from now on ends the entitlement at once while billing is retried."
                        )
                    }
                    return lines
                }
            }
        }
    }
}
