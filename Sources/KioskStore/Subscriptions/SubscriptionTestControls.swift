import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// The sandbox test controls over one subscription: what a customer (or Apple) would do to it, now on the
/// sandbox clock. Each change and the notification it causes commit together.
struct SubscriptionTestControls: Sendable {
    let lifecycle: SubscriptionLifecycle
    /// Turning auto-renew off is the subscriber tapping Cancel: the real-time retention flow runs first.
    var retention: RetentionService?

    private var store: StoreContext { lifecycle.store }

    /// The actions of `POST /apps/{bundleId}/subscriptions/{originalTransactionId}`.
    enum Action: String, CaseIterable {
        case renew, expire
        case failRenewal = "fail-renewal"
        case recover
        case autoRenewOn = "auto-renew-on"
        case autoRenewOff = "auto-renew-off"
        case setAutoRenewProduct = "set-auto-renew-product"
        case priceIncrease = "price-increase"
        case consentAccept = "consent-accept"
        case consentDecline = "consent-decline"
    }

    /// The app's sandbox subscriptions of one tester.
    func list(bundleId: String, tester: String) async throws -> TestSubscriptionsResponse {
        try await store.database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            let tester = try await AccountService.requireAccount(tester, .sandbox, in: tx)
            return TestSubscriptionsResponse(
                subscriptions: try await tx.subscriptions(accountId: tester.id, appId: app.id, environment: .sandbox)
                    .map { Self.info($0) })
        }
    }

    func gracePeriod(bundleId: String) async throws -> TestGracePeriod {
        try await store.database.transaction { tx in
            TestGracePeriod(days: try await CatalogService.requireApp(bundleId, in: tx).billingGracePeriodDays)
        }
    }

    /// Turns the app's billing grace period on (3, 16 or 28 days) or off (nil); failures from then on use it.
    func setGracePeriod(bundleId: String, _ request: TestGracePeriod) async throws -> TestGracePeriod {
        let catalog = CatalogService(database: store.database, clock: store.clocks.base)
        let app = try await catalog.setBillingGracePeriod(bundleId: bundleId, days: request.days)
        return TestGracePeriod(days: app.billingGracePeriodDays)
    }

    func act(bundleId: String, originalTransactionId: Int64, _ request: TestSubscriptionRequest) async throws
        -> TestSubscriptionInfo
    {
        guard let action = Action(rawValue: request.action) else {
            throw KioskError(
                .unknownSubscriptionAction, "'\(request.action)' is not something a subscription test control does.",
                field: "action", fix: "Use one of: \(Action.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        if action == .autoRenewOff, let retention {
            return try await retention.cancel(
                bundleId: bundleId, originalTransactionId: originalTransactionId, choice: request.retentionChoice,
                requestIdentifier: request.requestIdentifier)
        }
        let now = store.clocks.sandbox.now()
        let row = try await store.ledger.commit { tx, effects in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard
                var row = try await tx.lockedSubscription(
                    originalTransactionId: originalTransactionId, environment: .sandbox),
                row.appId == app.id
            else {
                throw KioskError(
                    .subscriptionNotFound,
                    "The app \(bundleId) has no sandbox subscription with original transaction id \(originalTransactionId).",
                    field: "originalTransactionId",
                    fix: "List them with `kiosk test subscriptions --app \(bundleId) --tester EMAIL`.")
            }
            try await apply(action, request: request, to: &row, app: app, now: now, in: tx, effects: &effects)
            return row
        }
        return Self.info(row)
    }

    private func apply(
        _ action: Action, request: TestSubscriptionRequest, to row: inout StoreSubscription, app: App, now: Date,
        in tx: any StorageTransaction, effects: inout StoreEffects
    ) async throws {
        let context = try await SubscriptionLifecycle.Context.load(row, in: tx)
        switch action {
        case .renew:
            try requireState(row, [.active], action)
            // The current period ends now, and the period end happens at once.
            try await endCurrentPeriod(&row, context: context, now: now, in: tx)
            _ = try await lifecycle.act(on: &row, at: now, in: tx, effects: &effects)
        case .expire:
            try requireState(row, [.active, .billingRetry, .gracePeriod], action)
            try await endCurrentPeriod(&row, context: context, now: now, in: tx)
            _ = try await lifecycle.expire(
                &row, .voluntary, at: now, context: try await SubscriptionLifecycle.Context.load(row, in: tx), in: tx,
                effects: &effects)
        case .failRenewal:
            try requireState(row, [.active, .billingRetry, .gracePeriod], action)
            row.failNextRenewal = true
            row.updatedAt = now
            try await tx.updateSubscription(row)
        case .recover:
            try requireState(row, [.billingRetry, .gracePeriod], action)
            row.failNextRenewal = false
            _ = try await lifecycle.act(on: &row, at: now, in: tx, effects: &effects)
        case .autoRenewOn, .autoRenewOff:
            try requireState(row, [.active, .billingRetry, .gracePeriod], action)
            let enabled = action == .autoRenewOn
            guard row.autoRenewEnabled != enabled else { return }
            row.autoRenewEnabled = enabled
            row.updatedAt = now
            try await tx.updateSubscription(row)
            try await lifecycle.notify(
                .didChangeRenewalStatus, subtype: enabled ? .autoRenewEnabled : .autoRenewDisabled, row,
                at: now, context: context, in: tx, effects: &effects)
        case .setAutoRenewProduct:
            try requireState(row, [.active, .billingRetry, .gracePeriod], action)
            try await setAutoRenewProduct(
                &row, request.productId, context: context, now: now, in: tx, effects: &effects)
        case .priceIncrease:
            try requireState(row, [.active, .billingRetry, .gracePeriod], action)
            guard let storefront = Storefront.named(context.latest.storefront),
                let price = context.renewalProduct?.pricing.price(in: storefront)
            else {
                throw KioskError(
                    .noPriceInStorefront,
                    "The product \(row.autoRenewProductId) has no price in \(context.latest.storefront).",
                    fix: "Price the product for the storefront first.")
            }
            row.renewalPriceMinorUnits = price
            row.priceIncreaseStatus = 0
            row.updatedAt = now
            try await tx.updateSubscription(row)
            try await lifecycle.notify(
                .priceIncrease, subtype: .pending, row, at: now, context: context, in: tx, effects: &effects)
        case .consentAccept, .consentDecline:
            guard row.priceIncreaseStatus == 0 else {
                throw KioskError(
                    .noPriceIncreasePending, "The subscription \(row.originalTransactionId) awaits no consent.",
                    fix: "Start one with the price-increase action first.")
            }
            if action == .consentAccept {
                row.priceIncreaseStatus = 1
                row.updatedAt = now
                try await tx.updateSubscription(row)
                try await lifecycle.notify(
                    .priceIncrease, subtype: .accepted, row, at: now, context: context, in: tx, effects: &effects)
            } else {
                // Declining turns auto-renew off; the period end then expires it for the price increase.
                row.autoRenewEnabled = false
                row.updatedAt = now
                try await tx.updateSubscription(row)
                try await lifecycle.notify(
                    .didChangeRenewalStatus, subtype: .autoRenewDisabled, row, at: now, context: context,
                    in: tx, effects: &effects)
            }
        }
    }

    /// The next renewal will be into `productId`, another product of the same group (a downgrade or crossgrade).
    private func setAutoRenewProduct(
        _ row: inout StoreSubscription, _ productId: String?, context: SubscriptionLifecycle.Context, now: Date,
        in tx: any StorageTransaction, effects: inout StoreEffects
    ) async throws {
        guard let productId, let product = try await tx.product(appId: row.appId, productId: productId),
            let membership = product.subscription, membership.groupId == row.groupId
        else {
            throw KioskError(
                .invalidAutoRenewProduct, "Name an auto-renewable of the subscription's group in productId.",
                field: "productId", fix: "Use a product of subscription group \(row.groupId).")
        }
        guard row.autoRenewProductId != productId else { return }
        let current = try await tx.product(appId: row.appId, productId: row.productId)?.subscription?.level
        row.autoRenewProductId = productId
        row.updatedAt = now
        try await tx.updateSubscription(row)
        var updated = context
        updated.renewalProduct = product
        try await lifecycle.notify(
            .didChangeRenewalPref, subtype: (current ?? 0) < membership.level ? .downgrade : nil, row, at: now,
            context: updated, in: tx, effects: &effects)
    }

    /// Cuts the current period short at `now`: its transaction and the row expire now.
    private func endCurrentPeriod(
        _ row: inout StoreSubscription, context: SubscriptionLifecycle.Context, now: Date, in tx: any StorageTransaction
    ) async throws {
        var latest = context.latest
        if let expires = latest.expiresDate, expires > now {
            latest.expiresDate = now
            latest.modifiedAt = now
            try store.ledger.sign(&latest, bundleId: context.app.bundleId, now: now)
            try await tx.updateTransaction(latest)
        }
        row.expiresAt = min(row.expiresAt, now)
        row.nextEventAt = now
    }

    private func requireState(_ row: StoreSubscription, _ states: [StoreSubscription.State], _ action: Action) throws {
        guard states.contains(row.state) else {
            throw KioskError(
                .subscriptionState,
                "The subscription \(row.originalTransactionId) is \(row.state.rawValue); "
                    + "\(action.rawValue) needs it \(states.map(\.rawValue).joined(separator: " or ")).",
                fix: "Check its state with `kiosk test subscriptions`.")
        }
    }

    static func info(_ row: StoreSubscription, retention: RetentionEvent? = nil) -> TestSubscriptionInfo {
        TestSubscriptionInfo(
            originalTransactionId: String(row.originalTransactionId),
            latestTransactionId: String(row.latestTransactionId), productId: row.productId,
            autoRenewProductId: row.autoRenewProductId, autoRenewStatus: row.autoRenewEnabled,
            state: row.state.rawValue, status: row.state.appleStatus,
            expiresDate: row.expiresAt.millisecondsSince1970, nextEventDate: row.nextEventAt?.millisecondsSince1970,
            expirationIntent: row.expirationIntent,
            gracePeriodExpiresDate: row.gracePeriodExpiresAt?.millisecondsSince1970,
            priceIncreaseStatus: row.priceIncreaseStatus, renewalCount: row.renewalCount, retention: retention)
    }
}
