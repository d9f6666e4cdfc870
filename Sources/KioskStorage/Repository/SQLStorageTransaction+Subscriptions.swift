import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Subscription rows, keyed by environment and original transaction id.
extension SQLStorageTransaction {
    func insertSubscription(_ subscription: StoreSubscription) async throws {
        try await session.run(
            """
            INSERT INTO subscriptions (environment, original_transaction_id, app_id, account_id, group_id, product_id,
                latest_transaction_id, auto_renew_product_id, auto_renew_enabled, state, expires_at, next_event_at,
                expiration_intent, billing_retry_started_at, grace_period_expires_at, price_increase_status,
                renewal_price_minor_units, renewal_count, fail_next_renewal, offer_type, offer_identifier,
                offer_discount_type, offer_period, offer_periods_remaining, created_at, updated_at,
                commitment_period, commitment_periods, commitment_expires_at, commitment_price_minor_units,
                renewal_billing_plan)
            VALUES (\(bind: subscription.environment.rawValue), \(bind: subscription.originalTransactionId),
                \(bind: subscription.appId), \(bind: Self.text(subscription.accountId)), \(bind: subscription.groupId),
                \(bind: subscription.productId), \(bind: subscription.latestTransactionId),
                \(bind: subscription.autoRenewProductId), \(bind: subscription.autoRenewEnabled),
                \(bind: subscription.state.rawValue), \(bind: subscription.expiresAt.millisecondsSince1970),
                \(bind: subscription.nextEventAt?.millisecondsSince1970), \(bind: subscription.expirationIntent),
                \(bind: subscription.billingRetryStartedAt?.millisecondsSince1970),
                \(bind: subscription.gracePeriodExpiresAt?.millisecondsSince1970),
                \(bind: subscription.priceIncreaseStatus), \(bind: subscription.renewalPriceMinorUnits),
                \(bind: subscription.renewalCount), \(bind: subscription.failNextRenewal),
                \(bind: subscription.offer?.type.rawValue), \(bind: subscription.offer?.identifier),
                \(bind: subscription.offer?.paymentMode.rawValue), \(bind: subscription.offer?.period),
                \(bind: subscription.offerPeriodsRemaining), \(bind: subscription.createdAt.millisecondsSince1970),
                \(bind: subscription.updatedAt.millisecondsSince1970),
                \(bind: subscription.commitment?.billingPeriodNumber),
                \(bind: subscription.commitment?.totalBillingPeriods),
                \(bind: subscription.commitment?.expiresDate.millisecondsSince1970),
                \(bind: subscription.commitment?.priceMinorUnits), \(bind: subscription.renewalBillingPlan.rawValue))
            """
        )
    }

    func updateSubscription(_ subscription: StoreSubscription) async throws {
        // Not its app, account, group or creation, which are fixed when it is inserted: SQLite rewrites the entry of
        // every index that has a column the statement sets, changed or not, and subscriptions_account_idx has three.
        let row = try await session.first(
            """
            UPDATE subscriptions SET product_id = \(bind: subscription.productId),
                latest_transaction_id = \(bind: subscription.latestTransactionId),
                auto_renew_product_id = \(bind: subscription.autoRenewProductId),
                auto_renew_enabled = \(bind: subscription.autoRenewEnabled),
                state = \(bind: subscription.state.rawValue),
                expires_at = \(bind: subscription.expiresAt.millisecondsSince1970),
                next_event_at = \(bind: subscription.nextEventAt?.millisecondsSince1970),
                expiration_intent = \(bind: subscription.expirationIntent),
                billing_retry_started_at = \(bind: subscription.billingRetryStartedAt?.millisecondsSince1970),
                grace_period_expires_at = \(bind: subscription.gracePeriodExpiresAt?.millisecondsSince1970),
                price_increase_status = \(bind: subscription.priceIncreaseStatus),
                renewal_price_minor_units = \(bind: subscription.renewalPriceMinorUnits),
                renewal_count = \(bind: subscription.renewalCount),
                fail_next_renewal = \(bind: subscription.failNextRenewal),
                offer_type = \(bind: subscription.offer?.type.rawValue),
                offer_identifier = \(bind: subscription.offer?.identifier),
                offer_discount_type = \(bind: subscription.offer?.paymentMode.rawValue),
                offer_period = \(bind: subscription.offer?.period),
                offer_periods_remaining = \(bind: subscription.offerPeriodsRemaining),
                updated_at = \(bind: subscription.updatedAt.millisecondsSince1970),
                commitment_period = \(bind: subscription.commitment?.billingPeriodNumber),
                commitment_periods = \(bind: subscription.commitment?.totalBillingPeriods),
                commitment_expires_at = \(bind: subscription.commitment?.expiresDate.millisecondsSince1970),
                commitment_price_minor_units = \(bind: subscription.commitment?.priceMinorUnits),
                renewal_billing_plan = \(bind: subscription.renewalBillingPlan.rawValue)
            WHERE environment = \(bind: subscription.environment.rawValue)
                AND original_transaction_id = \(bind: subscription.originalTransactionId)
            RETURNING original_transaction_id
            """
        )
        try requireUpdated(
            row, "\(subscription.environment.rawValue) subscription \(subscription.originalTransactionId)")
    }

    func subscription(originalTransactionId: Int64, environment: StoreEnvironment) async throws -> StoreSubscription? {
        try await session.first(
            """
            SELECT * FROM subscriptions WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id = \(bind: originalTransactionId)
            """
        )
        .map(Self.decodeSubscription)
    }

    func subscriptions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreSubscription]
    {
        try await session.all(
            """
            SELECT * FROM subscriptions WHERE environment = \(bind: environment.rawValue) AND app_id = \(bind: appId)
                AND account_id = \(bind: Self.text(accountId))
            ORDER BY original_transaction_id
            """
        )
        .map(Self.decodeSubscription)
    }

    func claimDueSubscriptions(environment: StoreEnvironment, dueBy: Date, limit: Int) async throws
        -> [StoreSubscription]
    {
        // PostgreSQL: each replica locks the rows it takes and skips rows another replica holds, so a due row is
        // acted on by one scheduler; the lock lasts until the claiming transaction ends. SQLite has one writer
        // at a time, so the transaction alone is enough.
        let locking: SQLQueryString = session.sql.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
        return try await session.all(
            """
            SELECT * FROM subscriptions WHERE environment = \(bind: environment.rawValue)
                AND next_event_at IS NOT NULL AND next_event_at <= \(bind: dueBy.millisecondsSince1970)
            ORDER BY next_event_at, original_transaction_id
            LIMIT \(bind: limit)\(locking)
            """
        )
        .map(Self.decodeSubscription)
    }

    func lockedSubscription(originalTransactionId: Int64, environment: StoreEnvironment) async throws
        -> StoreSubscription?
    {
        let locking: SQLQueryString = session.sql.dialect.name == "postgresql" ? " FOR UPDATE" : ""
        return try await session.first(
            """
            SELECT * FROM subscriptions WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id = \(bind: originalTransactionId)\(locking)
            """
        )
        .map(Self.decodeSubscription)
    }

    static func decodeSubscription(_ row: any SQLRow) throws -> StoreSubscription {
        var offer: AppliedOffer?
        if let type = try row.optional("offer_type", as: Int.self) {
            guard let offerType = OfferType(rawValue: type),
                let mode = OfferPaymentMode(rawValue: try row.decode(column: "offer_discount_type", as: String.self))
            else { throw StorageError.engine(message: "subscription row has an unknown offer type or discount type") }
            offer = AppliedOffer(
                type: offerType, identifier: try row.optional("offer_identifier", as: String.self), paymentMode: mode,
                period: try row.optional("offer_period", as: String.self))
        }
        return StoreSubscription(
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: Int64.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            accountId: try row.uuid("account_id"),
            groupId: try row.decode(column: "group_id", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            latestTransactionId: try row.decode(column: "latest_transaction_id", as: Int64.self),
            autoRenewProductId: try row.decode(column: "auto_renew_product_id", as: String.self),
            autoRenewEnabled: try row.decode(column: "auto_renew_enabled", as: Bool.self),
            state: try row.enumeration("state", as: StoreSubscription.State.self),
            expiresAt: try row.date("expires_at"),
            nextEventAt: try row.optionalDate("next_event_at"),
            expirationIntent: try row.optional("expiration_intent", as: Int.self),
            billingRetryStartedAt: try row.optionalDate("billing_retry_started_at"),
            gracePeriodExpiresAt: try row.optionalDate("grace_period_expires_at"),
            priceIncreaseStatus: try row.optional("price_increase_status", as: Int.self),
            renewalPriceMinorUnits: try row.optional("renewal_price_minor_units", as: Int.self),
            renewalCount: try row.decode(column: "renewal_count", as: Int.self),
            failNextRenewal: try row.decode(column: "fail_next_renewal", as: Bool.self),
            offer: offer,
            offerPeriodsRemaining: try row.decode(column: "offer_periods_remaining", as: Int.self),
            commitment: try decodeCommitment(row),
            renewalBillingPlan: try row.enumeration("renewal_billing_plan", as: BillingPlanType.self),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }
}
