import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// Auto-renewable subscriptions as the App Store Server API and notifications report them: status, signed
/// renewal info, renewal-date extensions.
///
/// A subscription is the chain of transactions that share an original transaction id; its latest transaction
/// (by purchase date, then id) carries its current period. Renewals come with a later issue, so for now a
/// subscription is active until its first period ends and then expired.
struct SubscriptionService: Sendable {
    let purchases: PurchaseService
    let notifications: NotificationService

    /// Apple's subscription `status`.
    enum Status: Int, Sendable, CaseIterable {
        case active = 1, expired, billingRetry, billingGracePeriod, revoked
    }

    /// Why a subscription could not be extended.
    enum ExtensionRefusal: Error, Sendable {
        /// Not an active, unrevoked auto-renewable.
        case ineligible
        /// Already extended twice in the past 365 days.
        case maximumReached
    }

    /// How many extensions a subscription may get in ``extensionWindow``.
    static let maximumExtensions = 2
    static let extensionWindow: TimeInterval = 365 * 86_400

    static func status(of transaction: StoreTransaction, at now: Date) -> Status {
        if transaction.revocationDate != nil { return .revoked }
        if let expires = transaction.expiresDate, expires > now { return .active }
        return .expired
    }

    /// The latest transaction of each auto-renewable subscription among `transactions`, by original
    /// transaction id.
    static func latestPerSubscription(_ transactions: [StoreTransaction]) -> [StoreTransaction] {
        let chains = Dictionary(grouping: transactions.filter { $0.productType == .autoRenewable }) {
            $0.originalTransactionId
        }
        return chains.values.compactMap { chain in
            chain.max { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
        }
        .sorted { $0.originalTransactionId < $1.originalTransactionId }
    }

    /// The subscription's renewal info as Apple's `JWSRenewalInfoDecodedPayload`, signed now.
    ///
    /// While active it renews at `expiresDate` into the same product at the storefront's current price; once
    /// expired or revoked, auto-renew is off and `expirationIntent` is 5 (other) until renewals exist.
    func signedRenewalInfo(
        for latest: StoreTransaction, chain: [StoreTransaction], now: Date, in tx: any StorageTransaction
    ) async throws -> String {
        let active = Self.status(of: latest, at: now) == .active
        let storefront = Storefront.named(latest.storefront)
        let product = try await tx.product(appId: latest.appId, productId: latest.productId)
        let renewalPrice = storefront.flatMap { storefront in
            product?.pricing.price(in: storefront).map {
                PurchaseService.milliunits($0, exponent: storefront.currency.minorUnitExponent)
            }
        }
        let payload = JWSRenewalInfoDecodedPayload(
            expirationIntent: active ? nil : 5, originalTransactionId: String(latest.originalTransactionId),
            autoRenewProductId: latest.productId, productId: latest.productId, autoRenewStatus: active ? 1 : 0,
            signedDate: now.millisecondsSince1970, environment: latest.environment.appleName,
            recentSubscriptionStartDate: Self.recentStart(of: chain)?.millisecondsSince1970,
            renewalDate: active ? latest.expiresDate?.millisecondsSince1970 : nil,
            currency: storefront?.currency.code ?? latest.currency, renewalPrice: renewalPrice,
            appAccountToken: latest.appAccountToken?.uuidString.lowercased())
        return try purchases.signing.sign(payload, environment: latest.environment)
    }

    /// Apple's `recentSubscriptionStartDate`: the start of the latest run of periods without a gap of 60 days
    /// or more.
    static func recentStart(of chain: [StoreTransaction]) -> Date? {
        let periods = chain.sorted { $0.purchaseDate < $1.purchaseDate }
        guard var start = periods.first?.purchaseDate else { return nil }
        for (previous, next) in zip(periods, periods.dropFirst()) {
            if let end = previous.expiresDate, next.purchaseDate.timeIntervalSince(end) >= 60 * 86_400 {
                start = next.purchaseDate
            }
        }
        return start
    }

    /// Moves the subscription's expiry `days` later, re-signs its latest transaction and records the extension;
    /// returns the changed transaction and its `RENEWAL_EXTENDED` notification (deliver it after commit).
    func extend(
        _ latest: StoreTransaction, app: App, days: Int, requestIdentifier: String, now: Date,
        in tx: any StorageTransaction
    ) async throws -> (StoreTransaction, ServerNotification) {
        guard latest.productType == .autoRenewable, Self.status(of: latest, at: now) == .active,
            let expires = latest.expiresDate
        else { throw ExtensionRefusal.ineligible }
        let count = try await tx.subscriptionExtensionCount(
            originalTransactionId: latest.originalTransactionId, environment: latest.environment,
            since: now - Self.extensionWindow)
        guard count < Self.maximumExtensions else { throw ExtensionRefusal.maximumReached }
        var extended = latest
        extended.expiresDate = expires + TimeInterval(days) * 86_400
        extended.modifiedAt = now
        try purchases.sign(&extended, bundleId: app.bundleId, now: now)
        try await tx.updateTransaction(extended)
        try await tx.insertSubscriptionExtension(
            originalTransactionId: extended.originalTransactionId, environment: extended.environment,
            requestIdentifier: requestIdentifier, extendByDays: days, at: now)
        let chain = try await chain(of: extended, in: tx)
        let notification = try await notifications.create(
            NotificationContent(
                type: "RENEWAL_EXTENDED", transaction: extended,
                signedRenewalInfo: try await signedRenewalInfo(for: extended, chain: chain, now: now, in: tx),
                status: Status.active.rawValue),
            app: app, environment: extended.environment, now: now, in: tx)
        return (extended, notification)
    }

    /// Every transaction of the subscription `transaction` belongs to.
    func chain(of transaction: StoreTransaction, in tx: any StorageTransaction) async throws -> [StoreTransaction] {
        try await tx.transactions(
            accountId: transaction.accountId, appId: transaction.appId, environment: transaction.environment
        )
        .filter { $0.originalTransactionId == transaction.originalTransactionId }
    }
}
