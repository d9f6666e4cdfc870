import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Offer codes as App Store Connect models them: campaigns (the terms), their batches (one-time codes, or one
/// custom code many customers redeem) and who redeemed each custom code.
extension SQLStorageTransaction {
    func insertOfferCodeCampaign(_ campaign: OfferCodeCampaign) async throws {
        let pricing = String(decoding: try JSONEncoder().encode(campaign.schedule.pricing), as: UTF8.self)
        try await session.run(
            """
            INSERT INTO offer_code_campaigns (id, app_id, product_id, name, eligibilities, introductory_offer_rule,
                payment_mode, period, number_of_periods, pricing_json, active, created_at)
            VALUES (\(bind: campaign.id), \(bind: campaign.appId), \(bind: campaign.productId), \(bind: campaign.name),
                \(bind: campaign.eligibilities.map(\.rawValue).sorted().joined(separator: ",")),
                \(bind: campaign.introductoryOfferRule.rawValue), \(bind: campaign.schedule.paymentMode.rawValue),
                \(bind: campaign.schedule.period.iso8601), \(bind: campaign.schedule.numberOfPeriods),
                \(bind: pricing), \(bind: campaign.active), \(bind: campaign.createdAt.millisecondsSince1970))
            """
        )
    }

    func setOfferCodeCampaignActive(id: OfferCodeCampaign.ID, active: Bool) async throws {
        let row = try await session.first(
            "UPDATE offer_code_campaigns SET active = \(bind: active) WHERE id = \(bind: id) RETURNING id")
        try requireUpdated(row, "offer code campaign \(id)")
    }

    func offerCodeCampaign(id: OfferCodeCampaign.ID) async throws -> OfferCodeCampaign? {
        try await session.first("SELECT * FROM offer_code_campaigns WHERE id = \(bind: id)").map(Self.decodeCampaign)
    }

    func offerCodeCampaigns(appId: App.ID, productId: String) async throws -> [OfferCodeCampaign] {
        try await session.all(
            """
            SELECT * FROM offer_code_campaigns WHERE app_id = \(bind: appId) AND product_id = \(bind: productId)
            ORDER BY id
            """
        ).map(Self.decodeCampaign)
    }

    func insertOfferCodeBatch(_ batch: OfferCodeBatch) async throws {
        try await session.run(
            """
            INSERT INTO offer_code_batches (id, campaign_id, app_id, custom_code, number_of_codes, expiration_date,
                environment, active, redemptions, created_at)
            VALUES (\(bind: batch.id), \(bind: batch.campaignId), \(bind: batch.appId), \(bind: batch.customCode),
                \(bind: batch.numberOfCodes), \(bind: batch.expirationDate?.millisecondsSince1970),
                \(bind: batch.environment?.rawValue), \(bind: batch.active), \(bind: batch.redemptions),
                \(bind: batch.createdAt.millisecondsSince1970))
            """
        )
    }

    func setOfferCodeBatchActive(id: OfferCodeBatch.ID, active: Bool) async throws {
        let row = try await session.first(
            "UPDATE offer_code_batches SET active = \(bind: active) WHERE id = \(bind: id) RETURNING id")
        try requireUpdated(row, "offer code batch \(id)")
    }

    func offerCodeBatch(id: OfferCodeBatch.ID) async throws -> OfferCodeBatch? {
        try await session.first("SELECT * FROM offer_code_batches WHERE id = \(bind: id)").map(Self.decodeBatch)
    }

    func offerCodeBatches(campaignId: OfferCodeCampaign.ID) async throws -> [OfferCodeBatch] {
        try await session.all("SELECT * FROM offer_code_batches WHERE campaign_id = \(bind: campaignId) ORDER BY id")
            .map(Self.decodeBatch)
    }

    func customCodeBatch(appId: App.ID, code: String) async throws -> OfferCodeBatch? {
        try await session.first(
            "SELECT * FROM offer_code_batches WHERE app_id = \(bind: appId) AND custom_code = \(bind: code)"
        ).map(Self.decodeBatch)
    }

    func offerCodes(batchId: OfferCodeBatch.ID) async throws -> [OfferCode] {
        try await session.all("SELECT * FROM offer_codes WHERE batch_id = \(bind: batchId) ORDER BY code")
            .map(Self.decodeOfferCode)
    }

    func redeemCustomCode(batchId: OfferCodeBatch.ID, accountId: UUID, at date: Date) async throws
        -> CustomCodeRedemption
    {
        // The counter's conditional update takes the batch's row lock, so concurrent redemptions never pass the
        // number of codes; a repeat by the same account gives its place back.
        let counted = try await session.first(
            """
            UPDATE offer_code_batches SET redemptions = redemptions + 1
            WHERE id = \(bind: batchId) AND redemptions < number_of_codes
            RETURNING id
            """
        )
        guard counted != nil else { return .noneLeft }
        let inserted = try await session.first(
            """
            INSERT INTO offer_code_redemptions (batch_id, account_id, redeemed_at)
            VALUES (\(bind: batchId), \(bind: Self.text(accountId)), \(bind: date.millisecondsSince1970))
            ON CONFLICT (batch_id, account_id) DO NOTHING
            RETURNING batch_id
            """
        )
        guard inserted != nil else {
            try await session.run(
                "UPDATE offer_code_batches SET redemptions = redemptions - 1 WHERE id = \(bind: batchId)")
            return .alreadyRedeemed
        }
        return .redeemed
    }

    private static func decodeCampaign(_ row: any SQLRow) throws -> OfferCodeCampaign {
        let eligibilities = try row.decode(column: "eligibilities", as: String.self).split(separator: ",").map {
            raw in
            guard let eligibility = OfferCodeCampaign.Eligibility(rawValue: String(raw)) else {
                throw StorageError.engine(message: "offer_code_campaigns holds the eligibility '\(raw)'")
            }
            return eligibility
        }
        return OfferCodeCampaign(
            id: try row.decode(column: "id", as: Int64.self), appId: try row.decode(column: "app_id", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            name: try row.decode(column: "name", as: String.self), eligibilities: Set(eligibilities),
            introductoryOfferRule: try row.enumeration(
                "introductory_offer_rule", as: OfferCodeCampaign.IntroductoryOfferRule.self),
            schedule: try offerSchedule(row, table: "offer_code_campaigns"),
            active: try row.decode(column: "active", as: Bool.self), createdAt: try row.date("created_at"))
    }

    private static func decodeBatch(_ row: any SQLRow) throws -> OfferCodeBatch {
        OfferCodeBatch(
            id: try row.decode(column: "id", as: Int64.self),
            campaignId: try row.decode(column: "campaign_id", as: Int64.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            customCode: try row.optional("custom_code", as: String.self),
            numberOfCodes: try row.decode(column: "number_of_codes", as: Int.self),
            expirationDate: try row.optionalDate("expiration_date"),
            environment: try row.optional("environment", as: String.self).map { raw in
                guard let environment = StoreEnvironment(rawValue: raw) else {
                    throw StorageError.engine(message: "offer_code_batches holds the environment '\(raw)'")
                }
                return environment
            },
            active: try row.decode(column: "active", as: Bool.self),
            redemptions: try row.decode(column: "redemptions", as: Int.self), createdAt: try row.date("created_at"))
    }
}
