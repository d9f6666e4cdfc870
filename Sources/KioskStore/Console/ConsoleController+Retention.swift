import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// An app's Retention page: what the developer configured through Apple's Retention Messaging API in one
/// environment (images, messages, default messages, the real-time URL, performance tests), App Review's decision on
/// each image and message (approve or reject: only approved ones are shown to subscribers), the app's retention
/// offers, and what subscribers who tapped Cancel were shown.
extension ConsoleController {
    func addRetentionRoutes(to pages: RouterGroup<KioskRequestContext>) {
        guard let retention else { return }
        pages.get("apps/:bundleId/retention") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let environment = try request.environment(request.uri.queryParameters.get("environment"))
            let overview = try await retention.overview(bundleId: bundleId, environment: environment)
            return renderer.page(
                RetentionPage(bundleId: bundleId, overview), title: "Retention messaging of \(bundleId)",
                section: "Apps", session: context.consoleSession)
        }
        pages.get("apps/:bundleId/retention/images/:environment/:imageIdentifier") { _, context in
            let data = try await retention.imagePNG(
                bundleId: try context.parameters.require("bundleId"),
                environment: try StoreEnvironment(requested: try context.parameters.require("environment")),
                identifier: try context.parameters.require("imageIdentifier"))
            var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: data)))
            response.headers[.contentType] = "image/png"
            return response
        }
        pages.post("apps/:bundleId/retention/review") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "retention.review") { form in
                let kind = form["kind"] ?? ""
                let environment = form["environment"] ?? "sandbox"
                let reviewed = try await retention.review(
                    bundleId: bundleId,
                    RetentionReviewRequest(
                        environment: environment, imageIdentifier: kind == "image" ? form["identifier"] : nil,
                        messageIdentifier: kind == "message" ? form["identifier"] : nil, state: form["state"] ?? ""))
                return ConsoleOutcome(
                    target:
                        "\(bundleId) \(reviewed.environment) \(reviewed.kind) \(reviewed.identifier) \(reviewed.state)",
                    redirect: Self.retentionPath(bundleId, reviewed.environment),
                    notice:
                        "The \(reviewed.kind) \(reviewed.identifier) (\(reviewed.environment)) is now \(reviewed.state)."
                )
            }
        }
        pages.post("apps/:bundleId/retention/offers") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            return try await action(request, context, audit: "retention.offer") { form in
                let tier = try ConsoleForm.integer(form["tier"], field: "tier")
                let offer = try await retention.putRetentionOffer(
                    bundleId: bundleId,
                    RetentionOfferRequest(
                        productId: form["productId"] ?? "", identifier: form["identifier"] ?? "",
                        referenceName: form["referenceName"], paymentMode: form["paymentMode"] ?? "",
                        period: form["period"] ?? "",
                        numberOfPeriods: try ConsoleForm.integer(form["periods"], field: "periods"),
                        pricing: tier.map { Pricing(tier: $0) }))
                return ConsoleOutcome(
                    target: "\(bundleId)/\(offer.productId) \(offer.identifier)",
                    redirect: Self.retentionPath(bundleId, "sandbox"),
                    notice: "Saved the retention offer \(offer.identifier) of \(offer.productId).")
            }
        }
        pages.post("apps/:bundleId/retention/offers/:productId/:identifier/remove") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let productId = try context.parameters.require("productId")
            let identifier = try context.parameters.require("identifier")
            return try await action(request, context, audit: "retention.remove-offer") { _ in
                try await retention.deleteRetentionOffer(
                    bundleId: bundleId, productId: productId, identifier: identifier)
                return ConsoleOutcome(
                    target: "\(bundleId)/\(productId) \(identifier)", redirect: Self.retentionPath(bundleId, "sandbox"),
                    notice: "Removed the retention offer \(identifier) of \(productId).")
            }
        }
    }

    static func retentionPath(_ bundleId: String, _ environment: String) -> String {
        "/console/apps/\(bundleId)/retention?environment=\(environment)"
    }
}

/// One app's retention messaging in one environment.
struct RetentionPage: ConsoleView {
    static let template = "retention"

    struct Environment: Decodable {
        var name: String
        var path: String
        var current: Bool
    }

    /// The review buttons of an image or a message: the states it is not in.
    struct Review: Decodable {
        var state: String
        var label: String
    }

    struct Image: Decodable {
        var identifier: String
        var size: String
        var state: String
        var dimensions: String
        var bytes: String
        var created: String
        var path: String
        var reviews: [Review]
    }

    struct Bullet: Decodable {
        var text: String
        var image: String
        var altText: String
    }

    struct Message: Decodable {
        var identifier: String
        var state: String
        var header: String
        var body: String
        var headerPosition: String?
        var image: String?
        var altText: String?
        var bullets: [Bullet]
        var created: String
        var reviews: [Review]
    }

    struct DefaultMessage: Decodable {
        var productId: String
        var locale: String
        var message: String
    }

    struct Test: Decodable {
        var requestId: String
        var transaction: String
        var created: String
        var result: String
        var successRate: String
        var times: String
    }

    struct Offer: Decodable {
        var productId: String
        var identifier: String
        var referenceName: String
        var terms: String
        var removePath: String
    }

    struct Event: Decodable {
        var date: String
        var transaction: String
        var shown: String
        var outcome: String
        var summary: String
    }

    var bundleId: String
    var environment: String
    var environments: [Environment]
    var realtimeURL: String?
    var performanceTestPassed: Bool
    var images: [Image]
    var noImages: Bool
    var messages: [Message]
    var noMessages: Bool
    var defaults: [DefaultMessage]
    var noDefaults: Bool
    var tests: [Test]
    var noTests: Bool
    var offers: [Offer]
    var noOffers: Bool
    var paymentModes: [ConsoleOption]
    var events: [Event]
    var noEvents: Bool
}

extension RetentionPage {
    init(bundleId: String, _ overview: RetentionOverview) {
        func date(_ milliseconds: Int64) -> String {
            ConsoleController.time(Date(millisecondsSince1970: milliseconds))
        }
        func reviews(_ state: String) -> [Review] {
            [("APPROVED", "Approve"), ("REJECTED", "Reject")].filter { $0.0 != state }.map {
                Review(state: $0.0, label: $0.1)
            }
        }
        self.bundleId = bundleId
        environment = overview.environment
        environments = StoreEnvironment.allCases.map {
            Environment(
                name: $0.rawValue, path: ConsoleController.retentionPath(bundleId, $0.rawValue),
                current: $0.rawValue == overview.environment)
        }
        realtimeURL = overview.realtimeURL
        performanceTestPassed = overview.performanceTestPassed
        images = overview.images.map {
            Image(
                identifier: $0.imageIdentifier, size: $0.imageSize, state: $0.imageState,
                dimensions: "\($0.width) × \($0.height)", bytes: ByteCount.text($0.bytes),
                created: date($0.createdDate),
                path: "/console/apps/\(bundleId)/retention/images/\(overview.environment)/\($0.imageIdentifier)",
                reviews: reviews($0.imageState))
        }
        noImages = images.isEmpty
        messages = overview.messages.map {
            Message(
                identifier: $0.messageIdentifier, state: $0.messageState, header: $0.header, body: $0.body,
                headerPosition: $0.headerPosition, image: $0.imageIdentifier, altText: $0.altText,
                bullets: $0.bulletPoints.map { Bullet(text: $0.text, image: $0.imageIdentifier, altText: $0.altText) },
                created: date($0.createdDate), reviews: reviews($0.messageState))
        }
        noMessages = messages.isEmpty
        defaults = overview.defaultMessages.map {
            DefaultMessage(productId: $0.productId, locale: $0.locale, message: $0.messageIdentifier)
        }
        noDefaults = defaults.isEmpty
        tests = overview.performanceTests.map { test in
            let times =
                test.failureReason.map { "could not run: \($0)" }
                ?? test.result.responseTimes.map { "average \($0.average) ms, p95 \($0.p95) ms" } ?? "—"
            return Test(
                requestId: test.requestId, transaction: test.originalTransactionId, created: date(test.createdDate),
                result: test.result.result, successRate: test.result.successRate.map { "\($0) %" } ?? "—",
                times: times)
        }
        noTests = tests.isEmpty
        offers = overview.retentionOffers.map {
            Offer(
                productId: $0.productId, identifier: $0.identifier, referenceName: $0.referenceName,
                terms: "\($0.paymentMode), \($0.numberOfPeriods) × \($0.period)"
                    + ($0.pricing.tier.map { ", tier \($0)" } ?? ""),
                removePath: "/console/apps/\(bundleId)/retention/offers/\($0.productId)/\($0.identifier)/remove")
        }
        noOffers = offers.isEmpty
        paymentModes = OfferPaymentMode.allCases.map { ConsoleOption(value: $0.rawValue) }
        events = overview.events.map {
            Event(
                date: date($0.date), transaction: $0.originalTransactionId,
                shown: $0.shown.kind + ($0.shown.messageIdentifier.map { " \($0)" } ?? "")
                    + ($0.shown.offerIdentifier.map { " (offer \($0))" } ?? ""),
                outcome: $0.outcome, summary: $0.summary)
        }
        noEvents = events.isEmpty
    }
}
