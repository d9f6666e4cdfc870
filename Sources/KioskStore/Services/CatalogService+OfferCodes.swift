import Foundation
import KioskCore
import KioskStorage

extension CatalogService {
    /// Creates `count` (1–1000) one-time offer codes for an auto-renewable product of the app, each a fresh random
    /// code, all with the same offer terms.
    public func createOfferCodes(
        bundleId: String, productId: String, referenceName: String, paymentMode: String, period: String,
        numberOfPeriods: Int, pricing: Pricing, count: Int
    ) async throws -> [OfferCode] {
        guard OfferCode.batchLimit.contains(count) else {
            throw KioskError(
                .invalidCount, "count must be 1–1000, not \(count).", field: "count",
                fix: "Create at most 1000 codes per request.")
        }
        guard let mode = OfferPaymentMode(rawValue: paymentMode) else {
            throw KioskError(
                .invalidPaymentMode, "'\(paymentMode)' is not a payment mode.", field: "paymentMode",
                fix: "Use free_trial, pay_as_you_go or pay_up_front.")
        }
        guard let offerPeriod = OfferPeriod(iso8601: period) else {
            throw KioskError(
                .invalidOfferPeriod, "'\(period)' is not an offer period.", field: "period",
                fix: "Use an ISO 8601 duration such as P3D, P1W, P1M or P1Y.")
        }
        // A free trial keeps no price.
        let schedule = OfferSchedule(
            paymentMode: mode, period: offerPeriod, numberOfPeriods: numberOfPeriods,
            pricing: mode == .freeTrial ? Pricing() : pricing)
        if let error = OfferCode.validateTerms(referenceName: referenceName, schedule: schedule).first {
            throw error
        }
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            try await Self.requireAutoRenewable(productId, app: app, in: tx)
            var codes: [OfferCode] = []
            while codes.count < count {
                let code = OfferCode(
                    code: OfferCode.random(), appId: app.id, productId: productId, referenceName: referenceName,
                    schedule: schedule, createdAt: now)
                // A collision (31^12 codes) is skipped, not an error: the loop draws another.
                if try await tx.insertOfferCode(code) { codes.append(code) }
            }
            return codes
        }
    }

    /// The app's offer codes, optionally of one product, oldest first, redeemed or not.
    public func offerCodes(bundleId: String, productId: String?) async throws -> [OfferCode] {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            if let productId { try await Self.requireAutoRenewable(productId, app: app, in: tx) }
            return try await tx.offerCodes(appId: app.id, productId: productId)
        }
    }

    private static func requireAutoRenewable(_ productId: String, app: App, in tx: any StorageTransaction)
        async throws
    {
        guard let product = try await tx.product(appId: app.id, productId: productId) else {
            throw KioskError(
                .productNotFound, "\(app.bundleId) has no product '\(productId)'.", field: "productId",
                fix: "Check the product id with `kiosk products list --app \(app.bundleId)`.")
        }
        guard product.type == .autoRenewable else {
            throw KioskError(
                .notAutoRenewable,
                "\(productId) is \(product.type.appleName); offer codes are for auto-renewable subscriptions only.",
                field: "productId", fix: "Choose an auto-renewable product.")
        }
    }
}
