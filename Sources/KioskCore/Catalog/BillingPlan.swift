import Foundation

/// How an auto-renewable subscription bills: Apple's `billingPlanType` (transactions) and `renewalBillingPlanType`
/// (renewal info). Apple's "Supporting monthly subscriptions with a 12-month commitment": every auto-renewable has the
/// up-front plan; a one-year subscription may also offer the monthly plan, which bills once a month for a 12-month
/// commitment.
public enum BillingPlanType: String, Codable, Sendable, CaseIterable, Hashable {
    /// The whole period billed at its start: every subscription's plan.
    case billedUpFront = "BILLED_UPFRONT"
    /// Billed monthly through a 12-month commitment; only one-year subscriptions offer it.
    case monthly = "MONTHLY"
}

/// A one-year auto-renewable's monthly plan ("Monthly with a 12-month commitment" in App Store Connect, a `MONTHLY`
/// entry of `billingPlans` in Xcode's `.storekit` files): the customer commits to 12 monthly payments of `pricing`'s
/// amount, and the commitment renews for another 12 unless the customer cancels before it ends.
public struct MonthlyPlan: Codable, Sendable, Hashable {
    /// What each monthly payment charges, per storefront like the product's own price.
    public var pricing: Pricing

    /// Apple's commitment: 12 billing periods (`totalBillingPeriods`).
    public static let billingPeriods = 12
    /// One billing period of the plan.
    public static let billingPeriod = SubscriptionDuration.oneMonth
    /// The only duration App Store Connect offers the plan on.
    public static let commitmentDuration = SubscriptionDuration.oneYear
    /// App Store Connect's bounds on the commitment's total (12 monthly payments) against the up-front price: at least
    /// the up-front price and at most one and a half times it, in percent.
    public static let commitmentPercentOfUpFront = 100...150

    public init(pricing: Pricing) {
        self.pricing = pricing
    }

    /// One monthly payment in `storefront`, in minor units; nil when the plan has no price there.
    public func monthlyPrice(in storefront: Storefront) -> Int? {
        pricing.price(in: storefront)
    }

    /// The commitment's total in `storefront` (Apple's `commitmentPrice`: 12 monthly payments), in minor units.
    public func commitmentPrice(in storefront: Storefront) -> Int? {
        monthlyPrice(in: storefront).map { $0 * Self.billingPeriods }
    }
}

extension Product {
    /// One monthly payment of the product's monthly plan in `storefront`, in minor units, when the plan is offered
    /// there: the product is an auto-renewable with a monthly plan priced in the storefront. Nil: it is billed up
    /// front only there. The one test of whether the monthly plan can be bought, listed or renewed into.
    public func monthlyPlanPrice(in storefront: Storefront) -> Int? {
        guard type == .autoRenewable else { return nil }
        return monthlyPlan?.monthlyPrice(in: storefront)
    }
}

/// Where a transaction billed under the monthly plan stands in its commitment: Apple's `commitmentInfo` of a
/// transaction (`TransactionCommitmentInfo`). Apple's "Supporting monthly subscriptions with a 12-month commitment":
/// each billing period is its own transaction, whose `expiresDate` ends the period (what entitles) while
/// `commitmentExpiresDate` ends the commitment (for showing progress only).
public struct TransactionCommitment: Codable, Sendable, Hashable {
    /// This transaction's billing period in the commitment, 1 to `totalBillingPeriods`.
    public var billingPeriodNumber: Int
    public var totalBillingPeriods: Int
    /// When the commitment ends; a late billing recovery moves it.
    public var expiresDate: Date
    /// The commitment's total price, in minor units of the transaction's currency.
    public var priceMinorUnits: Int

    public init(billingPeriodNumber: Int, totalBillingPeriods: Int, expiresDate: Date, priceMinorUnits: Int) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.expiresDate = expiresDate
        self.priceMinorUnits = priceMinorUnits
    }

    /// Whether billing periods of the commitment come after this one: the customer committed to them, so the
    /// subscription bills them whatever its auto-renew status.
    public var hasPeriodsLeft: Bool { billingPeriodNumber < totalBillingPeriods }

    /// What each billing period of the commitment charges: the total spread evenly (the monthly price when it began).
    public var periodPriceMinorUnits: Int { priceMinorUnits / max(1, totalBillingPeriods) }

    /// The commitment's next billing period.
    public var next: TransactionCommitment {
        var next = self
        next.billingPeriodNumber += 1
        return next
    }
}
