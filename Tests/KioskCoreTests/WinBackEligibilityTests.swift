import Foundation
import KioskCore
import Testing

@Suite("Win-back eligibility")
struct WinBackEligibilityTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let offer = WinBackOffer(
        identifier: "back", referenceName: "Back",
        schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .month)),
        paidSubscriptionDurationInMonths: 2,
        timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(minimum: 1, maximum: 3),
        startDate: now - 86_400, endDate: now + 86_400)

    // Proves the offer's dates bound it: before its start and from its end nobody is eligible.
    @Test func datesBoundTheOffer() {
        let history = WinBackHistory(
            isSubscribed: false, paidMonths: 2, lastEndedAt: Self.now - 40 * 86_400, lastWinBackAt: nil)
        #expect(Self.offer.refusal(for: history, now: Self.now, environment: .production) == nil)
        #expect(
            Self.offer.refusal(for: history, now: Self.now + 86_400, environment: .production)?.code
                == .winBackOfferInactive)
        #expect(
            Self.offer.refusal(for: history, now: Self.now - 86_401, environment: .production)?.code
                == .winBackOfferInactive)
    }

    // Proves production counts calendar months since the end and the sandbox 5-minute months.
    @Test func monthsFollowTheEnvironment() {
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        #expect(WinBackHistory.monthsElapsed(from: start, to: start + 58 * 86_400, environment: .production) == 1)
        #expect(WinBackHistory.monthsElapsed(from: start, to: start + 27 * 86_400, environment: .production) == 0)
        #expect(WinBackHistory.monthsElapsed(from: start, to: start + 599, environment: .sandbox) == 1)
        #expect(WinBackHistory.monthsElapsed(from: start, to: start - 1, environment: .sandbox) == 0)
    }

    // Proves paid months count charged, unrefunded periods by their nominal length: a free trial and a refund
    // count nothing, 12 monthly periods or one year count 12.
    @Test func paidMonthsCountNominalPeriods() {
        let account = UUID()
        func period(_ id: Int64, price: Int, offer: AppliedOffer? = nil, revoked: Bool = false) -> StoreTransaction {
            StoreTransaction(
                id: id, environment: .sandbox, appId: 1, accountId: account, productId: "monthly",
                productType: .autoRenewable, originalTransactionId: 1, purchaseDate: Self.now,
                originalPurchaseDate: Self.now, quantity: 1, priceMinorUnits: price, currency: "USD",
                storefront: "USA", storefrontId: 143_441, applicationUsername: nil, appAccountToken: nil,
                orderId: "O\(id)", subscriptionGroupId: 7, revocationDate: revoked ? Self.now : nil, offer: offer,
                signedTransaction: "")
        }
        let monthly = Product(
            appId: 1, productId: "monthly", referenceName: "Monthly", type: .autoRenewable,
            subscription: SubscriptionMembership(groupId: 7, level: 1), duration: .oneMonth, createdAt: Self.now,
            updatedAt: Self.now)
        let trial = AppliedOffer(type: .introductory, paymentMode: .freeTrial, period: "P1W")
        let upFront = AppliedOffer(type: .winBack, identifier: "year", paymentMode: .payUpFront, period: "P1Y")
        let history = WinBackHistory(
            group: 7, subscriptions: [],
            transactions: [
                period(1, price: 0, offer: trial), period(2, price: 499), period(3, price: 499, revoked: true),
                period(4, price: 2999, offer: upFront),
            ], products: [monthly])
        #expect(history.paidMonths == 13)
        #expect(history.lastWinBackAt == Self.now)
        #expect(!history.isSubscribed)
        #expect(history.lastEndedAt == nil)
    }
}
