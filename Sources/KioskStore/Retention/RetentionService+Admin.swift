import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// The console API's view of retention messaging: what each app configured, App Review's decisions (an operator
/// approves or rejects images and messages), and the apps' retention offers.
extension RetentionService {
    /// How many recent cancellations and performance tests the overview lists.
    static let overviewLimit = 50

    public func overview(bundleId: String, environment: StoreEnvironment) async throws -> RetentionOverview {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            let tests = try await tx.retentionPerformanceTests(
                appId: app.id, environment: environment, limit: Self.overviewLimit)
            return RetentionOverview(
                environment: environment.rawValue,
                realtimeURL: try await tx.retentionRealtimeURL(appId: app.id, environment: environment),
                performanceTestPassed: try await Self.performanceTestPassed(appId: app.id, in: tx),
                images: try await tx.retentionImages(appId: app.id, environment: environment).map {
                    RetentionOverview.Image(
                        imageIdentifier: $0.identifier, imageSize: $0.size.rawValue, imageState: $0.state.rawValue,
                        width: $0.width, height: $0.height, bytes: $0.bytes,
                        createdDate: $0.createdAt.millisecondsSince1970)
                },
                messages: try await tx.retentionMessages(appId: app.id, environment: environment).map(Self.resource),
                defaultMessages: try await tx.retentionDefaultMessages(appId: app.id, environment: environment).map {
                    RetentionOverview.DefaultMessage(
                        productId: $0.productId, locale: $0.locale, messageIdentifier: $0.messageIdentifier)
                },
                performanceTests: try tests.map {
                    RetentionOverview.PerformanceTest(
                        requestId: $0.requestId, originalTransactionId: String($0.originalTransactionId),
                        createdDate: $0.createdAt.millisecondsSince1970, result: try Self.resultResponse(of: $0),
                        failureReason: $0.failureReason)
                },
                retentionOffers: try await tx.retentionOffers(appId: app.id).map(Self.resource),
                events: try await tx.retentionEvents(appId: app.id, environment: environment, limit: Self.overviewLimit)
                    .compactMap { try? JSONDecoder().decode(RetentionEvent.self, from: Data($0.event.utf8)) })
        }
    }

    static func resource(_ message: RetentionMessage) -> RetentionOverview.Message {
        RetentionOverview.Message(
            messageIdentifier: message.identifier, messageState: message.state.rawValue, header: message.header,
            body: message.body, headerPosition: message.headerPosition?.rawValue,
            imageIdentifier: message.image?.imageIdentifier, altText: message.image?.altText,
            bulletPoints: message.bulletPoints, createdDate: message.createdAt.millisecondsSince1970)
    }

    static func resource(_ offer: RetentionOffer) -> RetentionOfferResource {
        RetentionOfferResource(
            productId: offer.productId, identifier: offer.identifier, referenceName: offer.referenceName,
            paymentMode: offer.paymentMode.rawValue, period: offer.period.iso8601,
            numberOfPeriods: offer.numberOfPeriods, pricing: offer.pricing,
            createdDate: offer.createdAt.millisecondsSince1970)
    }

    /// App Review's decision on an image or a message: `APPROVED` lets the store show it, `REJECTED` (or `PENDING`
    /// again) keeps it from every customer, defaults and real-time answers alike.
    public func review(bundleId: String, _ request: RetentionReviewRequest) async throws -> RetentionReviewResponse {
        let environment = try StoreEnvironment(requested: request.environment)
        guard let state = RetentionMessaging.ReviewState(rawValue: request.state.uppercased()) else {
            throw KioskError(
                .invalidState, "'\(request.state.prefix(32))' is not a review state.", field: "state",
                fix: "Use APPROVED, REJECTED or PENDING.")
        }
        let (kind, raw): (String, String) =
            switch (request.imageIdentifier, request.messageIdentifier) {
            case (let image?, nil): ("image", image)
            case (nil, let message?): ("message", message)
            default:
                throw KioskError(
                    .missingField, "Name one image (imageIdentifier) or one message (messageIdentifier).",
                    field: "imageIdentifier", fix: "Send exactly one of the two.")
            }
        guard let uuid = UUID(uuidString: raw) else {
            throw KioskError(
                .invalidValue, "'\(raw.prefix(64))' is not a UUID.", field: "\(kind)Identifier",
                fix: "Copy the identifier from `kiosk retention show`.")
        }
        let identifier = uuid.uuidString.lowercased()
        let now = clocks.base.now()
        let found = try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            return kind == "image"
                ? try await tx.setRetentionImageState(
                    state, appId: app.id, environment: environment, identifier: identifier, at: now)
                : try await tx.setRetentionMessageState(
                    state, appId: app.id, environment: environment, identifier: identifier, at: now)
        }
        guard found else {
            throw KioskError(
                .notFound, "The app \(bundleId) has no \(environment.rawValue) \(kind) \(identifier).",
                field: "\(kind)Identifier", fix: "List them with `kiosk retention show --app \(bundleId)`.")
        }
        return RetentionReviewResponse(
            environment: environment.rawValue, kind: kind, identifier: identifier, state: state.rawValue)
    }

    /// The PNG of an image, for the console's review.
    func imagePNG(bundleId: String, environment: StoreEnvironment, identifier: String) async throws -> Data {
        let png = try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            return try await tx.retentionImagePNG(
                appId: app.id, environment: environment, identifier: identifier.lowercased())
        }
        guard let png, let data = Data(base64Encoded: png) else {
            throw KioskError(.notFound, "No image \(identifier.prefix(64)).", field: "imageIdentifier")
        }
        return data
    }

    // MARK: - Retention offers

    public func retentionOffers(bundleId: String) async throws -> [RetentionOfferResource] {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            return try await tx.retentionOffers(appId: app.id).map(Self.resource)
        }
    }

    /// Adds a retention offer to an auto-renewable, or replaces the one with its identifier. The identifier is
    /// shaped like a product id and not one of the product's promotional or win-back offers'.
    public func putRetentionOffer(bundleId: String, _ request: RetentionOfferRequest) async throws
        -> RetentionOfferResource
    {
        guard let mode = OfferPaymentMode(rawValue: request.paymentMode) else {
            throw KioskError(
                .invalidPaymentMode, "'\(request.paymentMode.prefix(32))' is not a payment mode.",
                field: "paymentMode", fix: "Use free_trial, pay_as_you_go or pay_up_front.")
        }
        guard let period = OfferPeriod(iso8601: request.period) else {
            throw KioskError(
                .invalidOfferPeriod, "'\(request.period.prefix(32))' is not an offer period.", field: "period",
                fix: "Use an ISO 8601 duration such as P3D, P1W, P1M or P1Y.")
        }
        if let error = CatalogValidator.validateProductId(
            request.identifier, field: "identifier", what: "offer identifier"
        ).first {
            throw error
        }
        let schedule = OfferSchedule(
            paymentMode: mode, period: period, numberOfPeriods: request.numberOfPeriods ?? 1,
            pricing: mode == .freeTrial ? Pricing() : request.pricing ?? Pricing())
        let referenceName = request.referenceName ?? request.identifier
        if let error = OfferCode.validateTerms(referenceName: referenceName, schedule: schedule).first { throw error }
        let now = clocks.base.now()
        return try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard let product = try await tx.product(appId: app.id, productId: request.productId),
                product.deletedAt == nil
            else {
                throw KioskError(
                    .productNotFound, "The app \(bundleId) has no product '\(request.productId.prefix(128))'.",
                    field: "productId", fix: "List them with `kiosk products list --app \(bundleId)`.")
            }
            guard product.type == .autoRenewable else {
                throw KioskError(
                    .notAutoRenewable, "\(product.productId) is not an auto-renewable subscription.",
                    field: "productId", fix: "Retention offers are for auto-renewable subscriptions.")
            }
            guard
                !product.promotionalOffers.contains(where: { $0.identifier == request.identifier })
                    && !product.winBackOffers.contains(where: { $0.identifier == request.identifier })
            else {
                throw KioskError(
                    .duplicateOfferIdentifier,
                    "\(product.productId) already has a promotional or win-back offer '\(request.identifier)'.",
                    field: "identifier", fix: "Give the retention offer its own identifier.")
            }
            let existing = try await tx.retentionOffers(appId: app.id).first {
                $0.productId == product.productId && $0.identifier == request.identifier
            }
            let offer = RetentionOffer(
                productId: product.productId, identifier: request.identifier, referenceName: referenceName,
                schedule: schedule, createdAt: existing?.createdAt ?? now)
            try await tx.upsertRetentionOffer(offer, appId: app.id)
            return Self.resource(offer)
        }
    }

    public func deleteRetentionOffer(bundleId: String, productId: String, identifier: String) async throws {
        let deleted = try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            return try await tx.deleteRetentionOffer(appId: app.id, productId: productId, identifier: identifier)
        }
        guard deleted else {
            throw KioskError(
                .offerNotFound, "\(productId.prefix(128)) has no retention offer '\(identifier.prefix(64))'.",
                field: "identifier", fix: "List them with `kiosk retention offers --app \(bundleId)`.")
        }
    }
}
