import Foundation
import KioskCore
import Testing

/// The rules of a monthly plan with a 12-month commitment, without a store (Apple's "Managing the life cycle of
/// monthly subscriptions with a 12-month commitment"): the commitment's payments are billed whatever auto-renew says,
/// its periods meet its end, a commitment's payment retries for 90 days, and only a one-year subscription has the plan.
@Suite struct CommitmentRenewalTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    static func subscription(
        period: Int?, state: StoreSubscription.State = .active, environment: StoreEnvironment = .production,
        autoRenew: Bool = true, priceIncreaseStatus: Int? = nil, renewals: Int = 0,
        renewalPlan: BillingPlanType = .monthly
    ) -> StoreSubscription {
        StoreSubscription(
            environment: environment, originalTransactionId: 1, appId: 1, accountId: UUID(), groupId: 1,
            productId: "pro.annual", latestTransactionId: 1, autoRenewProductId: "lite.annual",
            autoRenewEnabled: autoRenew, state: state, expiresAt: start, nextEventAt: start,
            billingRetryStartedAt: state == .active ? nil : start, priceIncreaseStatus: priceIncreaseStatus,
            renewalCount: renewals,
            commitment: period.map {
                TransactionCommitment(
                    billingPeriodNumber: $0, totalBillingPeriods: 12, expiresDate: start + 86_400 * 365,
                    priceMinorUnits: 7188)
            }, renewalBillingPlan: renewalPlan, createdAt: start, updatedAt: start)
    }

    static func decide(
        _ subscription: StoreSubscription, at: Date = start, forSale: Bool = true, pays: Bool = true
    ) -> RenewalDecision {
        RenewalDecision.decide(
            for: subscription, at: at, rules: RenewalRules(environment: subscription.environment),
            productForSale: forSale, paymentSucceeds: pays)
    }

    // Proves auto-renew off, a pending price increase and the sandbox's limit wait for the commitment's end, while a
    // product removed from sale or a failed payment act at once; at the 12th period's end the usual rules apply.
    @Test func theCommitmentsPaymentsAreBilledWhateverAutoRenewSays() {
        let cancelled = Self.subscription(period: 5, autoRenew: false, priceIncreaseStatus: 0)
        #expect(cancelled.continuesCommitment)
        #expect(cancelled.nextRenewalProductId == "pro.annual", "the commitment bills its own product")
        #expect(cancelled.nextBillingPlan == .monthly)
        #expect(Self.decide(cancelled) == .renew(recovery: false))
        #expect(Self.decide(cancelled, pays: false) == .startBillingRetry)
        #expect(Self.decide(cancelled, forSale: false) == .expire(.productNotForSale))
        let capped = Self.subscription(
            period: 11, environment: .sandbox, renewals: RenewalRules.sandboxRenewalLimit)
        #expect(Self.decide(capped) == .renew(recovery: false))

        let last = Self.subscription(period: 12, autoRenew: false, renewalPlan: .billedUpFront)
        #expect(!last.continuesCommitment)
        #expect(last.nextRenewalProductId == "lite.annual", "the commitment's end renews into the customer's choice")
        #expect(last.nextBillingPlan == .billedUpFront)
        #expect(Self.decide(last) == .expire(.voluntary))
        #expect(Self.decide(Self.subscription(period: 12)) == .renew(recovery: false))
        #expect(Self.decide(Self.subscription(period: 12, priceIncreaseStatus: 0)) == .expire(.priceIncrease))
    }

    // Proves a commitment's failed payment retries for Apple's 90 days, an up-front one for 60.
    @Test func aCommitmentsPaymentRetriesFor90Days() {
        let rules = RenewalRules(environment: .production)
        #expect(rules.retryEnd(from: Self.start, billingPlan: .monthly) == Self.start + 90 * 86_400)
        #expect(rules.retryEnd(from: Self.start) == Self.start + 60 * 86_400)
        let retrying = Self.subscription(period: 3, state: .billingRetry)
        #expect(Self.decide(retrying, at: Self.start + 61 * 86_400) == .renew(recovery: true))
        #expect(Self.decide(retrying, at: Self.start + 90 * 86_400) == .expire(.billingRetry))
        let upFront = Self.subscription(period: nil, state: .billingRetry, renewalPlan: .billedUpFront)
        #expect(Self.decide(upFront, at: Self.start + 61 * 86_400) == .expire(.billingRetry))
    }

    // Proves billing is retried through the whole window: after day 45 a commitment's payment is still retried (days
    // 60 and 75) until day 90, while an up-front payment's retries stop before its 60 days.
    @Test func retriesGoOnUntilTheWindowCloses() {
        let rules = RenewalRules(environment: .production)
        func day(_ days: Int) -> Date { Self.start + TimeInterval(days) * 86_400 }
        func retries(_ plan: BillingPlanType) -> [Date] {
            Array(
                sequence(first: Self.start) { rules.nextRetry(after: $0, startedAt: Self.start, billingPlan: plan) }
                    .dropFirst())
        }
        #expect(retries(.monthly) == [1, 3, 7, 14, 21, 30, 45, 60, 75].map(day))
        #expect(retries(.billedUpFront) == [1, 3, 7, 14, 21, 30, 45].map(day))
    }

    // Proves a commitment's payment never has a grace period, whatever the app's; an up-front one has the app's.
    @Test func aCommitmentsPaymentHasNoGracePeriod() {
        let rules = RenewalRules(environment: .production)
        #expect(rules.gracePeriodEnd(from: Self.start, days: 16, billingPlan: .monthly) == nil)
        #expect(
            rules.gracePeriodEnd(from: Self.start, days: 16, billingPlan: .billedUpFront) == Self.start + 16 * 86_400)
        #expect(rules.gracePeriodEnd(from: Self.start, days: nil, billingPlan: .billedUpFront) == nil)
    }

    static let usa = Storefront.named("USA")!

    static func pro(monthly: Int?) -> Product {
        Product(
            appId: 1, productId: "pro.annual", referenceName: "Pro", type: .autoRenewable,
            pricing: Pricing(customPrices: ["USA": 6000]), subscription: SubscriptionMembership(groupId: 1, level: 1),
            duration: .oneYear, monthlyPlan: monthly.map { MonthlyPlan(pricing: Pricing(customPrices: ["USA": $0])) },
            createdAt: start, updatedAt: start)
    }

    // Proves a new commitment lasts 12 of the tester's months and its first period one, wherever it starts (a
    // purchase or a renewal), and that there is none where the plan is not offered.
    @Test func aNewCommitmentFollowsTheRate() throws {
        var rules = RenewalRules(environment: .sandbox)
        rules.rate = .monthlyEvery1Hour
        let first = try #require(rules.newCommitment(to: Self.pro(monthly: 599), in: Self.usa, from: Self.start))
        #expect(
            first
                == TransactionCommitment(
                    billingPeriodNumber: 1, totalBillingPeriods: 12, expiresDate: Self.start + 12 * 3_600,
                    priceMinorUnits: 7188))
        #expect(rules.periodEnd(of: first) == Self.start + 3_600)
        #expect(rules.periodEnd(of: first.next) == Self.start + 2 * 3_600)
        #expect(rules.newCommitment(to: Self.pro(monthly: nil), in: Self.usa, from: Self.start) == nil)
        #expect(rules.newCommitment(to: Self.pro(monthly: 599), in: Storefront.named("FRA")!, from: Self.start) == nil)
    }

    // Proves what a renewal bills: the commitment's next period while it continues (whatever the product), then a new
    // commitment or the year up front as chosen, nothing when the choice is not sold in the storefront.
    @Test func whatTheRenewalBills() {
        let rules = RenewalRules(environment: .production)
        let continuing = Self.subscription(period: 5)
        let late = Self.start + 86_400
        let next = continuing.renewalTerms(into: nil, in: Self.usa, at: late, rules: rules)
        #expect(next?.plan == .monthly && next?.priceMinorUnits == 599 && next?.productId == "pro.annual")
        #expect(next?.commitment?.billingPeriodNumber == 6)
        #expect(next?.commitment?.expiresDate == Self.start + 86_400 * 366, "a late payment moves the end")

        let ending = Self.subscription(period: 12)
        let renewed = ending.renewalTerms(into: Self.pro(monthly: 499), in: Self.usa, at: Self.start, rules: rules)
        #expect(renewed?.commitment == rules.newCommitment(to: Self.pro(monthly: 499), in: Self.usa, from: Self.start))
        #expect(renewed?.priceMinorUnits == 499)
        #expect(ending.renewalTerms(into: Self.pro(monthly: nil), in: Self.usa, at: Self.start, rules: rules) == nil)
        #expect(ending.renewalTerms(into: nil, in: Self.usa, at: Self.start, rules: rules) == nil)
        let upFront = Self.subscription(period: 12, renewalPlan: .billedUpFront)
        let year = upFront.renewalTerms(into: Self.pro(monthly: nil), in: Self.usa, at: Self.start, rules: rules)
        #expect(
            year == RenewalTerms(productId: "pro.annual", plan: .billedUpFront, priceMinorUnits: 6000, commitment: nil))
        #expect(
            upFront.renewalTerms(
                into: Self.pro(monthly: nil), in: Storefront.named("FRA")!, at: Self.start, rules: rules)
                == nil)
    }

    // Proves billing periods are counted back from the commitment's end, so the 12th ends with it: calendar months
    // in production (from 31 January the periods end on the last days of shorter months), the tester's rate in the
    // sandbox.
    @Test func periodsMeetTheCommitmentsEnd() throws {
        let utc = Calendar.utc
        let start = try #require(utc.date(from: DateComponents(year: 2027, month: 1, day: 31, hour: 12)))
        let production = RenewalRules(environment: .production)
        let end = production.periodEnd(.oneYear, from: start)
        let ends = (1...12).map { production.commitmentPeriodEnd($0, of: 12, commitmentEnd: end) }
        #expect(ends[11] == end)
        #expect(utc.dateComponents([.month, .day], from: ends[0]) == DateComponents(month: 2, day: 28))
        #expect(utc.dateComponents([.month, .day], from: ends[1]) == DateComponents(month: 3, day: 31))
        #expect(utc.dateComponents([.month, .day], from: ends[2]) == DateComponents(month: 4, day: 30))

        var sandbox = RenewalRules(environment: .sandbox)
        sandbox.rate = .monthlyEvery3Minutes
        let sandboxEnd = sandbox.periodEnd(.oneYear, from: start)
        #expect(sandboxEnd == start + 12 * 180)
        #expect(sandbox.commitmentPeriodEnd(1, of: 12, commitmentEnd: sandboxEnd) == start + 180)
        #expect(sandbox.commitmentPeriodEnd(12, of: 12, commitmentEnd: sandboxEnd) == sandboxEnd)
    }

    // Proves a commitment's periods charge its total evenly and know when periods remain.
    @Test func aCommitmentsPeriods() {
        let first = TransactionCommitment(
            billingPeriodNumber: 1, totalBillingPeriods: 12, expiresDate: Self.start, priceMinorUnits: 7188)
        #expect(first.periodPriceMinorUnits == 599)
        #expect(first.hasPeriodsLeft)
        var period = first
        for _ in 2...12 { period = period.next }
        #expect(period.billingPeriodNumber == 12)
        #expect(!period.hasPeriodsLeft)
        let plan = MonthlyPlan(pricing: Pricing(customPrices: ["USA": 599]))
        let usa = Storefront.named("USA")!
        #expect(plan.commitmentPrice(in: usa) == 7188)
        #expect(plan.monthlyPrice(in: Storefront.named("FRA")!) == nil)
    }

    // Proves only a one-year auto-renewable has a monthly plan, priced between its up-front price and one and a half
    // times it over 12 payments, as App Store Connect requires.
    @Test func whereAMonthlyPlanIsAllowed() {
        func plan(_ monthly: Int) -> MonthlyPlan { MonthlyPlan(pricing: Pricing(customPrices: ["USA": monthly])) }
        var product = Product(
            appId: 1, productId: "pro.annual", referenceName: "Pro", type: .autoRenewable,
            pricing: Pricing(customPrices: ["USA": 6000]), subscription: SubscriptionMembership(groupId: 1, level: 1),
            duration: .oneYear, monthlyPlan: plan(599), createdAt: Self.start, updatedAt: Self.start)
        #expect(CatalogValidator.validate(product: product).isEmpty)
        for (monthly, allowed) in [(499, false), (500, true), (750, true), (751, false)] {
            product.monthlyPlan = plan(monthly)
            let errors = CatalogValidator.validate(product: product)
            #expect(errors.isEmpty == allowed, "12 × \(monthly) against 60.00 up front: \(errors)")
            if !allowed {
                #expect(errors.map(\.code) == [.invalidBillingPlan])
                #expect(errors.first?.field == "product.monthlyPlan.pricing")
            }
        }
        product.monthlyPlan = MonthlyPlan(pricing: Pricing())
        #expect(CatalogValidator.validate(product: product).map(\.code) == [.invalidBillingPlan])
        product.monthlyPlan = plan(599)
        product.duration = .oneMonth
        let monthly = CatalogValidator.validate(product: product)
        #expect(monthly.map(\.code) == [.invalidBillingPlan])
        #expect(monthly.first?.field == "product.monthlyPlan")
    }
}
