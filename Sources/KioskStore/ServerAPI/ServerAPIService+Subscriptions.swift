import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskStorage

/// The subscription endpoints of the App Store Server API: statuses and renewal-date extensions. Every lookup is
/// scoped to the caller's app and environment.
extension ServerAPIService {
    private var subscriptions: SubscriptionService { SubscriptionService(context: context) }

    /// Every auto-renewable of the customer the transaction (or original transaction) id belongs to, in the caller's
    /// app, grouped by subscription group, each with its latest transaction and freshly signed renewal info; only
    /// those in `statuses` when it is not empty.
    func subscriptionStatuses(anyTransactionId id: Int64, statuses wanted: Set<Int>, caller: ServerAPICaller)
        async throws -> StatusResponse
    {
        let environment = caller.environment
        let now = clocks.now(environment)
        let subscriptions = subscriptions
        let groups = try await database.transaction { tx -> [SubscriptionGroupIdentifierItem] in
            guard let found = try await tx.transaction(id: id, environment: environment),
                found.appId == caller.app.id
            else { throw ServerAPIError.transactionIdNotFound }
            let all = try await tx.transactions(
                accountId: found.accountId, appId: found.appId, environment: environment)
            var byGroup: [Int64: [LastTransactionsItem]] = [:]
            for latest in SubscriptionService.latestPerSubscription(all) {
                let status = try await subscriptions.status(of: latest, now: now, in: tx).rawValue
                guard wanted.isEmpty || wanted.contains(status), let groupId = latest.subscriptionGroupId else {
                    continue
                }
                let chain = all.filter { $0.originalTransactionId == latest.originalTransactionId }
                byGroup[groupId, default: []].append(
                    LastTransactionsItem(
                        status: status, originalTransactionId: String(latest.originalTransactionId),
                        signedTransactionInfo: latest.signedTransaction,
                        signedRenewalInfo: try await subscriptions.signedRenewalInfo(
                            for: latest, chain: chain, now: now, in: tx)))
            }
            return byGroup.keys.sorted().map {
                SubscriptionGroupIdentifierItem(
                    subscriptionGroupIdentifier: String($0), lastTransactions: byGroup[$0] ?? [])
            }
        }
        return StatusResponse(
            environment: environment.appleName, bundleId: caller.app.bundleId, appAppleId: caller.app.id, data: groups)
    }

    /// Moves one active subscription's expiry by `days`; a repeated `requestIdentifier` answers the first outcome and
    /// changes nothing.
    func extendRenewalDate(
        originalTransactionId id: Int64, days: Int, reason: Int, requestIdentifier: String, caller: ServerAPICaller
    ) async throws -> RenewalExtensionRequest {
        let environment = caller.environment
        let now = clocks.now(environment)
        let subscriptions = subscriptions
        return try await once(requestIdentifier, caller: caller, isSame: { $0.originalTransactionId == id }) {
            tx, effects in
            guard let original = try await tx.transaction(id: id, environment: environment),
                original.appId == caller.app.id, original.originalTransactionId == original.id
            else { throw ServerAPIError.originalTransactionIdNotFound }
            guard
                let latest = SubscriptionService.latestPerSubscription(
                    try await subscriptions.chain(of: original, in: tx)
                ).first
            else { throw ServerAPIError.subscriptionExtensionIneligible }
            let extended: StoreTransaction
            let notification: ServerNotification
            do {
                (extended, notification) = try await subscriptions.extend(
                    latest, app: caller.app, days: days, requestIdentifier: requestIdentifier, now: now, in: tx)
            } catch SubscriptionService.ExtensionRefusal.ineligible {
                throw ServerAPIError.subscriptionExtensionIneligible
            } catch SubscriptionService.ExtensionRefusal.maximumReached {
                throw ServerAPIError.subscriptionMaxExtension
            }
            let record = RenewalExtensionRequest(
                environment: environment, appId: caller.app.id, requestIdentifier: requestIdentifier,
                productId: nil, originalTransactionId: id, extendByDays: days, reasonCode: reason,
                storefrontCountryCodes: nil, createdAt: now, completedAt: now, succeededCount: 1, failedCount: 0,
                webOrderLineItemId: extended.webOrderLineItemId, effectiveDate: extended.expiresDate)
            try await tx.insertRenewalExtensionRequest(record)
            effects.deliver([notification])
            return record
        }
    }

    /// Extends every active subscription whose latest transaction is for `productId` (optionally only in
    /// `storefronts`). Kiosk completes the request before answering; a subscription already extended twice this
    /// year counts as failed. Each extension sends `RENEWAL_EXTENDED`, each failure `RENEWAL_EXTENSION`/`FAILURE`,
    /// and the end `RENEWAL_EXTENSION`/`SUMMARY`. A repeated `requestIdentifier` answers the first request.
    func extendRenewalDates(
        productId: String, storefronts: [String]?, days: Int, reason: Int, requestIdentifier: String,
        caller: ServerAPICaller
    ) async throws -> RenewalExtensionRequest {
        let environment = caller.environment
        let now = clocks.now(environment)
        let subscriptions = subscriptions
        return try await once(requestIdentifier, caller: caller, isSame: { $0.productId == productId }) {
            tx, effects in
            guard let product = try await tx.product(appId: caller.app.id, productId: productId),
                product.type == .autoRenewable, product.deletedAt == nil
            else { throw ServerAPIError.invalidProductId }
            var record = RenewalExtensionRequest(
                environment: environment, appId: caller.app.id, requestIdentifier: requestIdentifier,
                productId: productId, originalTransactionId: nil, extendByDays: days, reasonCode: reason,
                storefrontCountryCodes: storefronts, createdAt: now, completedAt: now, succeededCount: 0,
                failedCount: 0)
            var notifications: [ServerNotification] = []
            let candidates = try await tx.latestSubscriptionTransactions(
                productId: productId, appId: caller.app.id, environment: environment)
            for latest in candidates
            where SubscriptionService.status(of: latest, at: now) == .active
                && storefronts.map({ $0.contains(latest.storefront) }) ?? true
            {
                do {
                    let (_, notification) = try await subscriptions.extend(
                        latest, app: caller.app, days: days, requestIdentifier: requestIdentifier, now: now, in: tx)
                    record.succeededCount += 1
                    notifications.append(notification)
                } catch is SubscriptionService.ExtensionRefusal {
                    record.failedCount += 1
                    notifications.append(
                        try await self.notifications.create(
                            NotificationContent(type: .renewalExtension, subtype: .failure, transaction: latest),
                            app: caller.app, environment: environment, now: now, in: tx))
                }
            }
            try await tx.insertRenewalExtensionRequest(record)
            let summary = NotificationSummary(
                requestIdentifier: requestIdentifier, environment: environment.appleName, appAppleId: caller.app.id,
                bundleId: caller.app.bundleId, productId: productId, storefrontCountryCodes: storefronts,
                failedCount: Int64(record.failedCount), succeededCount: Int64(record.succeededCount))
            notifications.append(
                try await self.notifications.create(
                    NotificationContent(type: .renewalExtension, subtype: .summary, summary: summary),
                    app: caller.app, environment: environment, now: now, in: tx))
            effects.deliver(notifications)
            return record
        }
    }

    /// How a mass extension request went.
    func massExtensionStatus(productId: String, requestIdentifier: String, caller: ServerAPICaller) async throws
        -> MassExtendRenewalDateStatusResponse
    {
        let record = try await database.transaction { tx in
            try await tx.renewalExtensionRequest(
                requestIdentifier: requestIdentifier, appId: caller.app.id, environment: caller.environment)
        }
        guard let record, record.productId == productId else { throw ServerAPIError.statusRequestNotFound }
        return MassExtendRenewalDateStatusResponse(
            requestIdentifier: record.requestIdentifier, complete: record.completedAt != nil,
            completeDate: record.completedAt?.millisecondsSince1970, succeededCount: Int64(record.succeededCount),
            failedCount: Int64(record.failedCount))
    }

    /// Makes an extension request once per `requestIdentifier`: in one ledger change, an identifier used before
    /// answers what its request did (Apple refuses it for another request, `isSame` false), else `body` makes it. A
    /// concurrent request with the same identifier that commits first is found by running again.
    private func once(
        _ requestIdentifier: String, caller: ServerAPICaller,
        isSame: @escaping @Sendable (RenewalExtensionRequest) -> Bool,
        _ body: @escaping @Sendable (any StorageTransaction, inout StoreEffects) async throws -> RenewalExtensionRequest
    ) async throws -> RenewalExtensionRequest {
        let attempt = { @Sendable () async throws -> RenewalExtensionRequest in
            try await ledger.commit { tx, effects in
                if let existing = try await tx.renewalExtensionRequest(
                    requestIdentifier: requestIdentifier, appId: caller.app.id, environment: caller.environment)
                {
                    guard isSame(existing) else { throw ServerAPIError.invalidRequestIdentifier }
                    return existing
                }
                return try await body(tx, &effects)
            }
        }
        do {
            return try await attempt()
        } catch StorageError.uniqueViolation(let constraint) where constraint == "renewal_extensions.request_identifier"
        {
            return try await attempt()
        }
    }
}
