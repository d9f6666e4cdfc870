import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Promotional offer nonces, kept so each signed offer is redeemed once.
extension SQLStorageTransaction {
    func useOfferNonce(_ nonce: UUID, appId: App.ID, environment: StoreEnvironment, at date: Date) async throws
        -> Bool
    {
        try await session.first(
            """
            INSERT INTO promotional_offer_nonces (environment, app_id, nonce, used_at)
            VALUES (\(bind: environment.rawValue), \(bind: appId), \(bind: Self.text(nonce)),
                \(bind: date.millisecondsSince1970))
            ON CONFLICT (environment, app_id, nonce) DO NOTHING
            RETURNING nonce
            """
        ) != nil
    }
}

/// One-time offer codes: created by the admin, redeemed once by a purchase.
extension SQLStorageTransaction {
    func insertOfferCode(_ code: OfferCode) async throws -> Bool {
        let pricing = String(decoding: try JSONEncoder().encode(code.pricing), as: UTF8.self)
        return try await session.first(
            """
            INSERT INTO offer_codes (code, app_id, product_id, reference_name, payment_mode, period, number_of_periods,
                pricing_json, created_at, batch_id)
            VALUES (\(bind: code.code), \(bind: code.appId), \(bind: code.productId), \(bind: code.referenceName),
                \(bind: code.paymentMode.rawValue), \(bind: code.period.iso8601), \(bind: code.numberOfPeriods),
                \(bind: pricing), \(bind: code.createdAt.millisecondsSince1970), \(bind: code.batchId))
            ON CONFLICT (code) DO NOTHING
            RETURNING code
            """
        ) != nil
    }

    func offerCode(_ code: String) async throws -> OfferCode? {
        try await session.first("SELECT * FROM offer_codes WHERE code = \(bind: code)").map(Self.decodeOfferCode)
    }

    func offerCodes(appId: App.ID, productId: String?) async throws -> [OfferCode] {
        var filter: SQLQueryString = "app_id = \(bind: appId)"
        if let productId { filter += " AND product_id = \(bind: productId)" }
        return try await session.all("SELECT * FROM offer_codes WHERE \(filter) ORDER BY created_at, code")
            .map(Self.decodeOfferCode)
    }

    func redeemOfferCode(_ code: String, accountId: UUID, at date: Date) async throws -> Bool {
        try await session.first(
            """
            UPDATE offer_codes SET redeemed_at = \(bind: date.millisecondsSince1970),
                redeemed_account_id = \(bind: Self.text(accountId))
            WHERE code = \(bind: code) AND redeemed_at IS NULL
            RETURNING code
            """
        ) != nil
    }

    func setOfferCodeTransaction(_ code: String, appId: App.ID, accountId: UUID, transactionId: Int64) async throws {
        let oneTime = try await session.first(
            """
            UPDATE offer_codes SET redeemed_transaction_id = \(bind: transactionId)
            WHERE code = \(bind: code) AND redeemed_at IS NOT NULL
            RETURNING code
            """
        )
        guard oneTime == nil else { return }
        let custom = try await session.first(
            """
            UPDATE offer_code_redemptions SET transaction_id = \(bind: transactionId)
            WHERE account_id = \(bind: Self.text(accountId)) AND batch_id IN (
                SELECT id FROM offer_code_batches WHERE app_id = \(bind: appId) AND custom_code = \(bind: code))
            RETURNING batch_id
            """
        )
        try requireUpdated(custom, "redeemed offer code \(code)")
    }

    /// An offer's schedule from a row's `payment_mode`, `period`, `number_of_periods` and `pricing_json`.
    static func offerSchedule(_ row: any SQLRow, table: String) throws -> OfferSchedule {
        let periodText = try row.decode(column: "period", as: String.self)
        guard let period = OfferPeriod(iso8601: periodText) else {
            throw StorageError.engine(message: "\(table) holds the period '\(periodText)', which is not ISO 8601")
        }
        let pricingText = try row.decode(column: "pricing_json", as: String.self)
        let pricing: Pricing
        do {
            pricing = try JSONDecoder().decode(Pricing.self, from: Data(pricingText.utf8))
        } catch {
            throw StorageError.engine(message: "\(table) holds a pricing that is not valid JSON: \(pricingText)")
        }
        return OfferSchedule(
            paymentMode: try row.enumeration("payment_mode", as: OfferPaymentMode.self), period: period,
            numberOfPeriods: try row.decode(column: "number_of_periods", as: Int.self), pricing: pricing)
    }

    static func decodeOfferCode(_ row: any SQLRow) throws -> OfferCode {
        var redemption: OfferCode.Redemption?
        if let redeemedAt = try row.optionalDate("redeemed_at"),
            let accountId = try row.optionalUUID("redeemed_account_id")
        {
            redemption = OfferCode.Redemption(
                accountId: accountId, redeemedAt: redeemedAt,
                transactionId: try row.optional("redeemed_transaction_id", as: Int64.self))
        }
        return OfferCode(
            code: try row.decode(column: "code", as: String.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            referenceName: try row.decode(column: "reference_name", as: String.self),
            schedule: try offerSchedule(row, table: "offer_codes"), createdAt: try row.date("created_at"),
            redemption: redemption, batchId: try row.optional("batch_id", as: Int64.self))
    }
}
