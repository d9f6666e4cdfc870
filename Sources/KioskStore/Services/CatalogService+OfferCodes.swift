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

/// Offer codes as App Store Connect models them (``OfferCodeCampaign``): the terms and the customers they are
/// for, then batches of one-time codes and custom codes that redeem them.
extension CatalogService {
    /// Creates an offer code for a product of the app, active and with no codes yet: for an auto-renewable, offer
    /// terms for NEW, EXISTING or EXPIRED subscribers; for a one-time purchase, a price (a schedule paying up front
    /// once) for NON_SPENDER, ACTIVE_SPENDER or CHURNED_SPENDER customers.
    public func createOfferCodeCampaign(
        bundleId: String, productId: String, name: String, eligibilities: Set<OfferCodeCampaign.Eligibility>,
        introductoryOfferRule: OfferCodeCampaign.IntroductoryOfferRule, schedule: OfferSchedule
    ) async throws -> OfferCodeCampaign {
        if let error = OfferCode.validateTerms(referenceName: name, schedule: schedule).first { throw error }
        guard !eligibilities.isEmpty else {
            throw KioskError(
                .missingField, "An offer code is for at least one kind of customer.", field: "customerEligibilities",
                fix: "Name NEW, EXISTING or EXPIRED customers.")
        }
        let now = clock.now()
        return try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            guard let product = try await tx.product(appId: app.id, productId: productId), product.deletedAt == nil
            else {
                throw KioskError(
                    .productNotFound, "\(app.bundleId) has no product '\(productId)'.", field: "productId",
                    fix: "Check the product id with `kiosk products list --app \(app.bundleId)`.")
            }
            let kinds =
                product.type == .autoRenewable
                ? OfferCodeCampaign.Eligibility.subscriberKinds
                : Set(OfferCodeCampaign.Eligibility.allCases).subtracting(OfferCodeCampaign.Eligibility.subscriberKinds)
            if let wrong = eligibilities.subtracting(kinds).first {
                throw KioskError(
                    .unknownField,
                    "\(wrong.rawValue) customers are not a kind an offer code of \(product.type.appleName) is for.",
                    field: "customerEligibilities",
                    fix: "Choose among \(kinds.map(\.rawValue).sorted().joined(separator: ", ")).")
            }
            let campaign = OfferCodeCampaign(
                id: try await tx.nextIdentifier(.offerCodeCampaignId), appId: app.id, productId: productId,
                name: name, eligibilities: eligibilities, introductoryOfferRule: introductoryOfferRule,
                schedule: schedule, createdAt: now)
            try await tx.insertOfferCodeCampaign(campaign)
            return campaign
        }
    }

    /// The campaign `id` names and its app.
    public func offerCodeCampaign(id: OfferCodeCampaign.ID) async throws -> (OfferCodeCampaign, App) {
        try await database.transaction { tx in
            guard let campaign = try await tx.offerCodeCampaign(id: id),
                let app = try await tx.app(id: campaign.appId)
            else { throw Self.noOfferCode("\(id)") }
            return (campaign, app)
        }
    }

    /// A product's campaigns, oldest first.
    public func offerCodeCampaigns(bundleId: String, productId: String) async throws -> [OfferCodeCampaign] {
        try await database.transaction { tx in
            let app = try await Self.requireApp(bundleId, in: tx)
            return try await tx.offerCodeCampaigns(appId: app.id, productId: productId)
        }
    }

    /// Turns a campaign on or off; off, none of its codes can be redeemed.
    public func setOfferCodeCampaignActive(id: OfferCodeCampaign.ID, active: Bool) async throws -> OfferCodeCampaign {
        try await database.transaction { tx in
            guard var campaign = try await tx.offerCodeCampaign(id: id) else { throw Self.noOfferCode("\(id)") }
            try await tx.setOfferCodeCampaignActive(id: id, active: active)
            campaign.active = active
            return campaign
        }
    }

    /// Creates a batch of `count` one-time codes of the campaign, redeemable through `expirationDate` in
    /// `environment`.
    public func createOneTimeCodes(
        campaignId: OfferCodeCampaign.ID, count: Int, expirationDate: Date, environment: StoreEnvironment
    ) async throws -> OfferCodeBatch {
        try Self.checkBatchSize(count)
        let now = clock.now()
        return try await database.transaction { tx in
            let campaign = try await Self.requireCampaign(campaignId, in: tx)
            let batch = OfferCodeBatch(
                id: try await tx.nextIdentifier(.offerCodeBatchId), campaignId: campaign.id, appId: campaign.appId,
                customCode: nil, numberOfCodes: count, expirationDate: expirationDate, environment: environment,
                createdAt: now)
            try await tx.insertOfferCodeBatch(batch)
            var made = 0
            while made < count {
                let code = OfferCode(
                    code: OfferCode.random(), appId: campaign.appId, productId: campaign.productId,
                    referenceName: campaign.name, schedule: campaign.schedule, createdAt: now, batchId: batch.id)
                // A collision (31^12 codes) is skipped, not an error: the loop draws another.
                if try await tx.insertOfferCode(code) { made += 1 }
            }
            return batch
        }
    }

    /// Creates a custom code of the campaign (upper case), which up to `count` customers redeem once each.
    public func createCustomCode(
        campaignId: OfferCodeCampaign.ID, code: String, count: Int, expirationDate: Date?
    ) async throws -> OfferCodeBatch {
        try Self.checkBatchSize(count)
        let code = code.uppercased()
        guard OfferCodeBatch.isValidCustomCode(code) else {
            throw KioskError(
                .invalidReferenceName, "'\(code.prefix(70))' is not a custom code: 1–64 letters and digits.",
                field: "customCode", fix: "Choose a code such as SPRING2026.")
        }
        let now = clock.now()
        return try await database.transaction { tx in
            let campaign = try await Self.requireCampaign(campaignId, in: tx)
            let takenAsCustom = try await tx.customCodeBatch(appId: campaign.appId, code: code) != nil
            let takenAsOneTime = try await tx.offerCode(code) != nil
            if takenAsCustom || takenAsOneTime {
                throw KioskError(
                    .alreadyExists, "The app already has an offer code '\(code)'.", field: "customCode",
                    fix: "Choose another code; a code is unique in its app.")
            }
            let batch = OfferCodeBatch(
                id: try await tx.nextIdentifier(.offerCodeBatchId), campaignId: campaign.id, appId: campaign.appId,
                customCode: code, numberOfCodes: count, expirationDate: expirationDate, environment: nil,
                createdAt: now)
            try await tx.insertOfferCodeBatch(batch)
            return batch
        }
    }

    /// The batch `id` names, with its campaign's codes (one-time ones; none for a custom code).
    public func offerCodeBatch(id: OfferCodeBatch.ID) async throws -> (OfferCodeBatch, [OfferCode]) {
        try await database.transaction { tx in
            guard let batch = try await tx.offerCodeBatch(id: id) else { throw Self.noOfferCode("\(id)") }
            return (batch, batch.customCode == nil ? try await tx.offerCodes(batchId: id) : [])
        }
    }

    /// A campaign's batches, oldest first.
    public func offerCodeBatches(campaignId: OfferCodeCampaign.ID) async throws -> [OfferCodeBatch] {
        try await database.transaction { tx in try await tx.offerCodeBatches(campaignId: campaignId) }
    }

    /// Turns a batch on or off.
    public func setOfferCodeBatchActive(id: OfferCodeBatch.ID, active: Bool) async throws -> OfferCodeBatch {
        try await database.transaction { tx in
            guard var batch = try await tx.offerCodeBatch(id: id) else { throw Self.noOfferCode("\(id)") }
            try await tx.setOfferCodeBatchActive(id: id, active: active)
            batch.active = active
            return batch
        }
    }

    private static func checkBatchSize(_ count: Int) throws {
        guard OfferCodeBatch.maximumCodes.contains(count) else {
            throw KioskError(
                .invalidCount,
                "numberOfCodes must be \(OfferCodeBatch.maximumCodes.lowerBound)–"
                    + "\(OfferCodeBatch.maximumCodes.upperBound), not \(count).",
                field: "numberOfCodes", fix: "Ask for at most \(OfferCodeBatch.maximumCodes.upperBound) codes at once.")
        }
    }

    private static func requireCampaign(_ id: OfferCodeCampaign.ID, in tx: any StorageTransaction) async throws
        -> OfferCodeCampaign
    {
        guard let campaign = try await tx.offerCodeCampaign(id: id) else { throw noOfferCode("\(id)") }
        return campaign
    }

    private static func noOfferCode(_ id: String) -> KioskError {
        KioskError(.offerNotFound, "There is no offer code \(id).", fix: "List a product's offer codes first.")
    }
}
