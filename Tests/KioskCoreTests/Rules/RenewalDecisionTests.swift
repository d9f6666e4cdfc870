import Foundation
import KioskCore
import Testing

/// The store's renewal rules, without a store: what a due subscription event comes to.
@Suite struct RenewalDecisionTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    static let rules = RenewalRules(environment: .production)

    static func subscription(
        _ state: StoreSubscription.State = .active, environment: StoreEnvironment = .production,
        autoRenew: Bool = true, priceIncreaseStatus: Int? = nil, renewals: Int = 0, retryStarted: Date? = nil,
        graceEnds: Date? = nil
    ) -> StoreSubscription {
        StoreSubscription(
            environment: environment, originalTransactionId: 1, appId: 1, accountId: UUID(), groupId: 1,
            productId: "monthly", latestTransactionId: 1, autoRenewProductId: "monthly", autoRenewEnabled: autoRenew,
            state: state, expiresAt: start, nextEventAt: start, billingRetryStartedAt: retryStarted,
            gracePeriodExpiresAt: graceEnds, priceIncreaseStatus: priceIncreaseStatus, renewalCount: renewals,
            createdAt: start, updatedAt: start)
    }

    static func decide(
        _ subscription: StoreSubscription, at: Date = start, forSale: Bool = true, pays: Bool = true
    ) -> RenewalDecision {
        RenewalDecision.decide(
            for: subscription, at: at, rules: rules, productForSale: forSale, paymentSucceeds: pays)
    }

    // Proves the end of a period renews, or starts billing retry when the charge fails.
    @Test func aPeriodEndRenewsOrRetries() {
        #expect(Self.decide(Self.subscription()) == .renew(recovery: false))
        #expect(Self.decide(Self.subscription(), pays: false) == .startBillingRetry)
    }

    // Proves what ends a subscription at its period's end, in Apple's order of reasons.
    @Test func whatEndsASubscription() {
        #expect(
            Self.decide(Self.subscription(autoRenew: false, priceIncreaseStatus: 0), forSale: false)
                == .expire(.priceIncrease))
        #expect(Self.decide(Self.subscription(autoRenew: false), forSale: false) == .expire(.voluntary))
        #expect(Self.decide(Self.subscription(), forSale: false, pays: false) == .expire(.productNotForSale))
        let limit = RenewalRules.sandboxRenewalLimit
        #expect(Self.decide(Self.subscription(environment: .sandbox, renewals: limit)) == .expire(.voluntary))
        #expect(Self.decide(Self.subscription(renewals: limit)) == .renew(recovery: false))
    }

    // Proves billing retry recovers on a good charge, waits on a bad one, and ends after the retry window.
    @Test func billingRetry() {
        let retrying = Self.subscription(.billingRetry, retryStarted: Self.start)
        #expect(Self.decide(retrying, at: Self.start + 86_400) == .renew(recovery: true))
        #expect(Self.decide(retrying, at: Self.start + 86_400, pays: false) == .retryLater)
        #expect(Self.decide(retrying, at: Self.start + 86_400, forSale: false) == .retryLater)
        let windowEnd = Self.rules.retryEnd(from: Self.start)
        #expect(Self.decide(retrying, at: windowEnd) == .expire(.billingRetry))
    }

    // Proves the grace period ends at its date, before any retry; the retry window's end comes first of all.
    @Test func gracePeriod() {
        let graceEnd = Self.start + 3 * 86_400
        let grace = Self.subscription(.gracePeriod, retryStarted: Self.start, graceEnds: graceEnd)
        #expect(Self.decide(grace, at: graceEnd - 1, pays: false) == .retryLater)
        #expect(Self.decide(grace, at: graceEnd) == .endGracePeriod)
        #expect(Self.decide(grace, at: Self.rules.retryEnd(from: Self.start)) == .expire(.billingRetry))
    }

    // Proves ended subscriptions have nothing due, and every reason maps to Apple's subtype and intent.
    @Test func endedSubscriptionsAndReasons() {
        #expect(Self.decide(Self.subscription(.expired)) == .nothing)
        #expect(Self.decide(Self.subscription(.revoked)) == .nothing)
        let reasons = RenewalDecision.ExpirationReason.allCases
        #expect(reasons.map(\.intent) == [1, 2, 3, 4])
        #expect(reasons.map(\.subtype) == [.voluntary, .billingRetry, .priceIncrease, .productNotForSale])
    }
}
