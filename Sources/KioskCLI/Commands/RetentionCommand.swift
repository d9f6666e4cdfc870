import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk retention …`: an app's retention messaging (Apple's Retention Messaging API): what the developer
/// configured, App Review's decisions, retention offers, and what subscribers who tapped Cancel were shown.
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Show an app's retention messaging, review its images and messages, manage retention offers.",
        subcommands: [Show.self, Approve.self, Reject.self, Offers.self])

    struct AppEnvironment: ParsableArguments {
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "sandbox or production.") var environment = "sandbox"
        @OptionGroup var connection: ConnectionOptions
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The real-time URL, images, messages and default messages in one environment, their review "
                + "states, performance tests and the latest cancellations (which message each subscriber saw).")
        @OptionGroup var options: AppEnvironment

        func run() async throws {
            try await reportingErrors(json: options.connection.json) {
                let answer = try await options.connection.client.get(
                    AdminRoutes.retention.path(options.app), query: ["environment": options.environment])
                try options.connection.print(answer) { answer in
                    RetentionCommand.lines(try answer.decode(RetentionOverview.self))
                }
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve an image or a message (App Review): subscribers may be shown it.")
        @OptionGroup var options: AppEnvironment
        @Option(help: "The image's identifier.") var image: String?
        @Option(help: "The message's identifier.") var message: String?

        func run() async throws {
            try await RetentionCommand.review("APPROVED", image: image, message: message, options: options)
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reject an image or a message (App Review): no subscriber is shown it.")
        @OptionGroup var options: AppEnvironment
        @Option(help: "The image's identifier.") var image: String?
        @Option(help: "The message's identifier.") var message: String?

        func run() async throws {
            try await RetentionCommand.review("REJECTED", image: image, message: message, options: options)
        }
    }

    static func review(_ state: String, image: String?, message: String?, options: AppEnvironment) async throws {
        try await options.reportingErrors(
            json: options.connection.json, flags: ["imageIdentifier": "--image", "messageIdentifier": "--message"]
        ) {
            guard (image == nil) != (message == nil) else {
                throw CLIError(
                    message: "Name one image or one message.", field: "--image",
                    fix: "Give --image ID or --message ID (see `kiosk retention show`).")
            }
            let answer = try await options.connection.client.post(
                AdminRoutes.retentionReview.path(options.app),
                raw: try JSONBody(
                    RetentionReviewRequest(
                        environment: options.environment, imageIdentifier: image, messageIdentifier: message,
                        state: state)))
            try options.connection.print(answer) { answer in
                let reviewed = try answer.decode(RetentionReviewResponse.self)
                return [
                    "The \(reviewed.environment) \(reviewed.kind) \(reviewed.identifier) is \(reviewed.state)"
                        + (reviewed.state == "APPROVED"
                            ? ": subscribers may be shown it." : ": no subscriber is shown it.")
                ]
            }
        }
    }

    struct Offers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, add or remove retention offers (offerType 5), shown when no real-time answer can be.",
            subcommands: [List.self, Add.self, Remove.self], defaultSubcommand: List.self)

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the app's retention offers.")
            @Option(help: "The app's bundle id.") var app: String
            @OptionGroup var connection: ConnectionOptions

            func run() async throws {
                try await reportingErrors(json: connection.json) {
                    let answer = try await connection.client.get(AdminRoutes.retentionOffers.path(app))
                    try connection.print(answer) { answer in
                        var table = TextTable("PRODUCT", "OFFER", "NAME", "TERMS")
                        for offer in try answer.decode(RetentionOfferList.self).retentionOffers {
                            table.add(
                                offer.productId, offer.identifier, offer.referenceName, RetentionCommand.terms(offer))
                        }
                        return table.lines
                    }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add (or replace) a retention offer of an auto-renewable.")
            @Option(help: "The app's bundle id.") var app: String
            @Option(help: "The auto-renewable product id.") var product: String
            @Option(help: "The offer identifier (the transaction's offerIdentifier).") var identifier: String
            @Option(help: "The offer's reference name (default: its identifier).") var name: String?
            @Option(help: "free_trial, pay_as_you_go or pay_up_front.") var paymentMode = "free_trial"
            @Option(help: "The offer period, an ISO 8601 duration such as P1M.") var period = "P1M"
            @Option(help: "How many periods (pay_as_you_go: 1–12; otherwise 1).") var periods = 1
            @Option(help: "The price tier of each period (1–20); not for free trials.") var tier: Int?
            @OptionGroup var connection: ConnectionOptions

            func run() async throws {
                try await reportingErrors(
                    json: connection.json,
                    flags: ["productId": "--product", "referenceName": "--name", "numberOfPeriods": "--periods"]
                ) {
                    let answer = try await connection.client.post(
                        AdminRoutes.retentionOffers.path(app),
                        raw: try JSONBody(
                            RetentionOfferRequest(
                                productId: product, identifier: identifier, referenceName: name,
                                paymentMode: paymentMode, period: period, numberOfPeriods: periods,
                                pricing: tier.map { Pricing(tier: $0) })))
                    try connection.print(answer) { answer in
                        let offer = try answer.decode(RetentionOfferResource.self)
                        return [
                            "Saved the retention offer \(offer.identifier) of \(offer.productId): "
                                + "\(RetentionCommand.terms(offer)). Subscribers about to cancel may be shown it when "
                                + "the real-time answer gives nothing the store can show."
                        ]
                    }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a retention offer.")
            @Option(help: "The app's bundle id.") var app: String
            @Option(help: "The auto-renewable product id.") var product: String
            @Option(help: "The offer identifier.") var identifier: String
            @OptionGroup var connection: ConnectionOptions

            func run() async throws {
                try await reportingErrors(json: connection.json) {
                    let answer = try await connection.client.delete(
                        AdminRoutes.retentionOffer.path(app, product, identifier))
                    try connection.print(answer) { _ in ["Removed the retention offer \(identifier) of \(product)."] }
                }
            }
        }
    }

    static func terms(_ offer: RetentionOfferResource) -> String {
        "\(offer.paymentMode), \(offer.numberOfPeriods) × \(offer.period)"
            + (offer.pricing.tier.map { ", tier \($0)" } ?? "")
    }

    /// The overview as text.
    static func lines(_ overview: RetentionOverview) -> [String] {
        var lines = [
            "Environment:      \(overview.environment)",
            "Real-time URL:    \(overview.realtimeURL ?? "none (subscribers see the default message)")",
            "Performance test: \(overview.performanceTestPassed ? "passed" : "none passed")",
        ]
        lines.append("")
        var images = TextTable("IMAGE", "SIZE", "PIXELS", "STATE")
        for image in overview.images {
            images.add(image.imageIdentifier, image.imageSize, "\(image.width)x\(image.height)", image.imageState)
        }
        lines += overview.images.isEmpty ? ["No image."] : images.lines
        lines.append("")
        var messages = TextTable("MESSAGE", "STATE", "HEADER", "IMAGES")
        for message in overview.messages {
            let images = (message.imageIdentifier.map { [$0] } ?? []) + message.bulletPoints.map(\.imageIdentifier)
            messages.add(message.messageIdentifier, message.messageState, message.header, String(images.count))
        }
        lines += overview.messages.isEmpty ? ["No message."] : messages.lines
        lines.append("")
        var defaults = TextTable("DEFAULT FOR", "LOCALE", "MESSAGE")
        for item in overview.defaultMessages { defaults.add(item.productId, item.locale, item.messageIdentifier) }
        lines += overview.defaultMessages.isEmpty ? ["No default message."] : defaults.lines
        if !overview.performanceTests.isEmpty {
            lines.append("")
            var tests = TextTable("PERFORMANCE TEST", "RESULT", "SUCCESS", "P95")
            for test in overview.performanceTests {
                tests.add(
                    test.requestId, test.result.result, test.result.successRate.map { "\($0) %" } ?? "",
                    test.result.responseTimes.map { "\($0.p95) ms" } ?? "")
            }
            lines += tests.lines
        }
        if !overview.retentionOffers.isEmpty {
            lines.append("")
            var offers = TextTable("RETENTION OFFER", "PRODUCT", "TERMS")
            for offer in overview.retentionOffers { offers.add(offer.identifier, offer.productId, terms(offer)) }
            lines += offers.lines
        }
        lines.append("")
        if overview.events.isEmpty {
            lines.append("No subscriber has tapped Cancel in \(overview.environment) yet.")
        } else {
            lines.append("Cancellations, newest first:")
            for event in overview.events {
                lines.append(
                    "  \(Date(millisecondsSince1970: event.date).ISO8601Format())  \(event.originalTransactionId)  "
                        + event.summary)
            }
        }
        return lines
    }
}
