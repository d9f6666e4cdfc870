import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk test refund|decline-refund|reverse-refund|revoke|request-refund|notifications|resend-notification`:
/// refunds and revocations of sandbox transactions, and the app's server notifications.
extension TestCommand {
    static let refundSubcommands: [any ParsableCommand.Type] = [
        Refund.self, DeclineRefund.self, ReverseRefund.self, Revoke.self, RequestRefund.self, Notifications.self,
        ResendNotification.self,
    ]

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refund a sandbox transaction (REFUND): in full, or a percentage of its price.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String
        @Option(help: "0 (other) or 1 (an issue in the app).") var reason = 0
        @Option(help: "Refund this share of the price, 1–100 (prorated); full when left out.") var percentage: Int?

        func run() async throws {
            try await revise(
                options, transactionId, "refund", body: TestRefundRequest(reason: reason, percentage: percentage))
        }
    }

    struct DeclineRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decline-refund", abstract: "Turn down a refund of a sandbox transaction (REFUND_DECLINED).")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String

        func run() async throws { try await revise(options, transactionId, "decline-refund") }
    }

    struct ReverseRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reverse-refund", abstract: "Take back a refund (REFUND_REVERSED): the purchase counts again.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String

        func run() async throws { try await revise(options, transactionId, "reverse-refund") }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a purchase from a family member, Family Sharing stopped (REVOKE).")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String

        func run() async throws { try await revise(options, transactionId, "revoke") }
    }

    struct RequestRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "request-refund",
            abstract: "The customer asks for a refund of a consumable or subscription (CONSUMPTION_REQUEST).")
        @OptionGroup var options: AppOptions
        @Argument(help: "The transaction id.") var transactionId: String
        @Option(help: "UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL or OTHER.")
        var reason = "OTHER"

        func run() async throws {
            try await revise(options, transactionId, "request-refund", body: TestRefundRequestRequest(reason: reason))
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
                    options.path + "/notifications", query: ["environment": environment])
                try options.connection.print(answer) { answer in
                    let listed = try answer.decode(TestNotificationsResponse.self).notifications
                    if listed.isEmpty { return ["No \(environment) notifications."] }
                    return listed.map { notification in
                        let type = [notification.notificationType, notification.subtype].compactMap { $0 }
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
            abstract: "Send a notification (either environment) again now, the same signed payload.")
        @OptionGroup var options: AppOptions
        @Argument(help: "The notification's UUID (`kiosk test notifications`).") var uuid: String

        func run() async throws {
            try await reportingErrors {
                let answer = try await options.client.post(
                    options.path + "/notifications/\(uuid.pathEscaped)/resend")
                try options.connection.print(answer) { answer in
                    let notification = try answer.decode(TestNotificationInfo.self)
                    return [
                        "Resent \(notification.notificationType) \(notification.notificationUUID): "
                            + "\(notification.state), \(notification.attempts) attempt(s) in all."
                    ]
                }
            }
        }
    }
}

/// POSTs a refund or revocation control and prints what it did.
private func revise(
    _ options: TestCommand.AppOptions, _ transactionId: String, _ action: String, body: (any Encodable)? = nil
) async throws {
    try await reportingErrors {
        let answer = try await options.client.post(
            options.path + "/transactions/\(transactionId.pathEscaped)/\(action)",
            raw: try body.map { try JSONEncoder().encode($0) } ?? Data("{}".utf8))
        try options.connection.print(answer) { answer in
            let revised = try answer.decode(TestRevocationResponse.self)
            var lines = [
                "\(revised.notificationType) sent for transaction \(revised.transactionId) "
                    + "(notification \(revised.notificationUUID))."
            ]
            if let type = revised.revocationType {
                lines.append(
                    "Revoked: \(type), reason \(revised.revocationReason ?? 0), refunded "
                        + "\(revised.refundedMinorUnits) minor units.")
            }
            return lines
        }
    }
}
