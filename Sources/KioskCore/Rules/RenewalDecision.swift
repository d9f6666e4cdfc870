import Foundation

/// What a subscription's due event comes to: the rules of renewal, billing retry, the grace period and expiry,
/// with no I/O. The store's lifecycle asks this and carries it out.
public enum RenewalDecision: Sendable, Hashable {
    /// Charge the next period; `recovery` when it ends a billing retry.
    case renew(recovery: Bool)
    /// The renewal charge failed: billing retry begins (in the grace period when the app has one).
    case startBillingRetry
    /// Another retry failed: try again later.
    case retryLater
    /// The grace period is over; billing retry goes on without access.
    case endGracePeriod
    /// The subscription ends, for `reason`.
    case expire(ExpirationReason)
    /// Nothing is due (an expired or revoked subscription).
    case nothing

    /// Why a subscription ends: Apple's `EXPIRED` subtypes, each with the `expirationIntent` it sets.
    public enum ExpirationReason: Sendable, Hashable, CaseIterable {
        case voluntary
        case billingRetry
        case priceIncrease
        case productNotForSale

        public var subtype: NotificationSubtype {
            switch self {
            case .voluntary: .voluntary
            case .billingRetry: .billingRetry
            case .priceIncrease: .priceIncrease
            case .productNotForSale: .productNotForSale
            }
        }

        public var intent: Int {
            switch self {
            case .voluntary: 1
            case .billingRetry: 2
            case .priceIncrease: 3
            case .productNotForSale: 4
            }
        }
    }

    /// The event due at `at`. At the end of a period: an increase the customer did not consent to, auto-renew off,
    /// the sandbox's renewal limit and a product no longer for sale each end it, in that order; else a charge that
    /// `paymentSucceeds` renews it and one that fails starts billing retry. Inside a 12-month commitment only a
    /// product no longer for sale ends it: the customer committed to the remaining monthly payments, so auto-renew
    /// off, a pending price increase and the sandbox's limit wait for the commitment's end (Apple's "Managing the
    /// life cycle of monthly subscriptions with a 12-month commitment"). During billing retry: the retry window's
    /// end expires it (90 days for a commitment's payment, Apple's window there), the grace period's end ends the
    /// grace period, and a charge that succeeds recovers it.
    public static func decide(
        for subscription: StoreSubscription, at: Date, rules: RenewalRules, productForSale: Bool,
        paymentSucceeds: Bool
    ) -> RenewalDecision {
        switch subscription.state {
        case .active where subscription.continuesCommitment:
            guard productForSale else { return .expire(.productNotForSale) }
            return paymentSucceeds ? .renew(recovery: false) : .startBillingRetry
        case .active:
            if subscription.priceIncreaseStatus == 0 { return .expire(.priceIncrease) }
            if !subscription.autoRenewEnabled { return .expire(.voluntary) }
            if subscription.environment == .sandbox, subscription.renewalCount >= RenewalRules.sandboxRenewalLimit {
                return .expire(.voluntary)
            }
            guard productForSale else { return .expire(.productNotForSale) }
            return paymentSucceeds ? .renew(recovery: false) : .startBillingRetry
        case .billingRetry, .gracePeriod:
            let started = subscription.billingRetryStartedAt ?? subscription.expiresAt
            if at >= rules.retryEnd(from: started, billingPlan: subscription.nextBillingPlan) {
                return .expire(.billingRetry)
            }
            if subscription.state == .gracePeriod, let graceEnd = subscription.gracePeriodExpiresAt, at >= graceEnd {
                return .endGracePeriod
            }
            return paymentSucceeds && productForSale ? .renew(recovery: true) : .retryLater
        case .expired, .revoked:
            return .nothing
        }
    }
}
