import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// Auto-renewable subscriptions as the App Store Server API and notifications report them: status, signed
/// renewal info, renewal-date extensions.
///
/// A subscription is the chain of transactions that share an original transaction id; its latest transaction
/// (by purchase date, then id) carries its current period. Its state (status, auto-renew, billing retry, grace,
/// price increase) lives in its `StoreSubscription` row, which the renewal scheduler drives.
struct SubscriptionService: Sendable {
    let context: StoreContext

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

    /// The subscription's status: its row's state; a chain without a row (none is kept for it) is active until
    /// its latest transaction expires.
    func status(of latest: StoreTransaction, now: Date, in tx: any StorageTransaction) async throws -> Status {
        if latest.revocationDate != nil { return .revoked }
        guard
            let row = try await tx.subscription(
                originalTransactionId: latest.originalTransactionId, environment: latest.environment)
        else { return Self.status(of: latest, at: now) }
        return Status(rawValue: row.state.appleStatus) ?? .expired
    }

    /// The subscription's renewal info as Apple's `JWSRenewalInfoDecodedPayload`, signed now, from its row.
    func signedRenewalInfo(
        for latest: StoreTransaction, chain: [StoreTransaction], now: Date, in tx: any StorageTransaction
    ) async throws -> String {
        guard
            let row = try await tx.subscription(
                originalTransactionId: latest.originalTransactionId, environment: latest.environment)
        else {
            throw KioskError(
                .subscriptionRecordMissing,
                "The transaction \(latest.id) belongs to no subscription the store keeps (original transaction "
                    + "\(latest.originalTransactionId)).", fix: "Buy the subscription through the store.")
        }
        return try await signedRenewalInfo(for: row, latest: latest, chain: chain, now: now, in: tx)
    }

    /// Signs the renewal info of `subscription` (whose current transaction is `latest`) as of `now`, inside `tx`:
    /// what notifications, the App Store Server API and StoreKit report.
    /// `autoRenewProduct`, when the caller has it, saves reading it again.
    func signedRenewalInfo(
        for subscription: StoreSubscription, latest: StoreTransaction, chain: [StoreTransaction]? = nil,
        autoRenewProduct: Product? = nil, now: Date, in tx: any StorageTransaction
    ) async throws -> String {
        let payload = try await renewalInfo(
            for: subscription, latest: latest, chain: chain, autoRenewProduct: autoRenewProduct, now: now, in: tx)
        return try context.signing.sign(payload, environment: subscription.environment)
    }

    /// The renewal info of `subscription` as Apple's `JWSRenewalInfoDecodedPayload`; an ended one lists the win-back
    /// offers its customer may redeem now (`eligibleWinBackOfferIds`).
    ///
    /// Inside a 12-month commitment the top-level fields describe the next billing period (Apple's "Managing the life
    /// cycle of monthly subscriptions with a 12-month commitment"): while periods of the commitment remain it renews
    /// the current product under `MONTHLY` at the commitment's price, and `autoRenewStatus` stays 1 even after the
    /// customer cancelled; `commitmentInfo` says what happens at the commitment's end (the product and plan it renews
    /// into, whether it renews, when, and what that renewal's first charge costs).
    func renewalInfo(
        for subscription: StoreSubscription, latest: StoreTransaction, chain: [StoreTransaction]? = nil,
        autoRenewProduct: Product? = nil, now: Date, in tx: any StorageTransaction
    ) async throws -> JWSRenewalInfoDecodedPayload {
        let ended = subscription.state == .expired || subscription.state == .revoked
        let retrying = subscription.state == .billingRetry || subscription.state == .gracePeriod
        let storefront = Storefront.named(latest.storefront)
        let product =
            if let autoRenewProduct, autoRenewProduct.productId == subscription.autoRenewProductId {
                autoRenewProduct
            } else {
                try await tx.product(appId: subscription.appId, productId: subscription.autoRenewProductId)
            }
        let continues = !ended && subscription.continuesCommitment
        let milliunits = { (minorUnits: Int) in
            StoreLedger.milliunits(minorUnits, exponent: storefront?.currency.minorUnitExponent ?? 2)
        }
        // What the renewal bills, as the lifecycle will charge it (Core's renewal terms): the commitment's next
        // period while it continues, else the first charge of the renewal into the product and plan chosen; the
        // latter is also what `commitmentInfo` reports for the commitment's end.
        let rules = RenewalRules(environment: subscription.environment)
        let afterCommitment = storefront.flatMap { storefront in
            product.flatMap {
                subscription.termsAfterCommitment(
                    into: $0, in: storefront, at: subscription.expiresAt, rules: rules)
            }
        }
        let next =
            continues
            ? storefront.flatMap {
                subscription.renewalTerms(into: product, in: $0, at: subscription.expiresAt, rules: rules)
            } : afterCommitment
        let commitmentRenewalPrice = afterCommitment.map { milliunits($0.priceMinorUnits) }
        let renewalPrice = next.map { milliunits($0.priceMinorUnits) }
        let commitmentInfo: RenewalCommitmentInfo? =
            ended
            ? nil
            : subscription.commitment.map {
                RenewalCommitmentInfo(
                    commitmentAutoRenewProductId: subscription.autoRenewProductId,
                    commitmentAutoRenewStatus: subscription.autoRenewEnabled ? 1 : 0,
                    commitmentRenewalBillingPlanType: subscription.renewalBillingPlan.rawValue,
                    commitmentRenewalDate: $0.expiresDate.millisecondsSince1970,
                    commitmentRenewalPrice: commitmentRenewalPrice)
            }
        let offer = subscription.offerPeriodsRemaining > 0 && !continues ? subscription.offer : nil
        let periods: [StoreTransaction]
        if let chain { periods = chain } else { periods = try await self.chain(of: latest, in: tx) }
        let winBackOfferIds =
            ended
            ? try await PurchaseService.eligibleWinBackOfferIds(
                group: subscription.groupId, accountId: subscription.accountId, appId: subscription.appId,
                environment: subscription.environment, storefront: storefront, now: now, in: tx) : nil
        return JWSRenewalInfoDecodedPayload(
            expirationIntent: subscription.expirationIntent,
            originalTransactionId: String(subscription.originalTransactionId),
            autoRenewProductId: ended ? subscription.autoRenewProductId : subscription.nextRenewalProductId,
            productId: subscription.productId,
            autoRenewStatus: continues || (subscription.autoRenewEnabled && !ended) ? 1 : 0,
            isInBillingRetryPeriod: retrying ? true : (ended ? false : nil),
            priceIncreaseStatus: subscription.priceIncreaseStatus,
            gracePeriodExpiresDate: subscription.gracePeriodExpiresAt?.millisecondsSince1970,
            offerType: offer?.type.rawValue, offerIdentifier: offer?.identifier, signedDate: now.millisecondsSince1970,
            environment: subscription.environment.appleName,
            recentSubscriptionStartDate: Self.recentStart(of: periods)?.millisecondsSince1970,
            renewalDate: ended ? nil : subscription.expiresAt.millisecondsSince1970,
            currency: storefront?.currency.code ?? latest.currency, renewalPrice: renewalPrice,
            offerDiscountType: offer?.discountType, eligibleWinBackOfferIds: winBackOfferIds,
            appAccountToken: latest.appAccountToken?.uuidString.lowercased(), offerPeriod: offer?.period,
            renewalBillingPlanType: (ended ? subscription.renewalBillingPlan : subscription.nextBillingPlan).rawValue,
            commitmentInfo: commitmentInfo)
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
        let added = TimeInterval(days) * 86_400
        extended.expiresDate = expires + added
        // The commitment's end moves with its period, so the signed transaction and the renewal info agree.
        extended.commitment?.expiresDate += added
        extended.modifiedAt = now
        try context.ledger.sign(&extended, bundleId: app.bundleId, now: now)
        try await tx.updateTransaction(extended)
        if var row = try await tx.lockedSubscription(
            originalTransactionId: extended.originalTransactionId, environment: extended.environment),
            row.latestTransactionId == extended.id, let newExpiry = extended.expiresDate
        {
            // The renewal (the scheduler's next event) moves with the expiry, and the commitment (the latest
            // transaction's) with it.
            row.commitment = extended.commitment
            row.expiresAt = newExpiry
            if row.state == .active { row.nextEventAt = newExpiry }
            row.updatedAt = now
            try await tx.updateSubscription(row)
        }
        try await tx.insertSubscriptionExtension(
            originalTransactionId: extended.originalTransactionId, environment: extended.environment,
            requestIdentifier: requestIdentifier, extendByDays: days, at: now)
        let chain = try await chain(of: extended, in: tx)
        let notification = try await context.notifications.create(
            NotificationContent(
                type: .renewalExtended, transaction: extended,
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
