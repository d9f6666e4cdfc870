import Foundation

/// What a subscription's renewal bills: the product, the plan, the charge and, under the monthly plan, the
/// commitment's billing period. Core's one answer, which the renewal charges and the renewal info reports.
public struct RenewalTerms: Sendable, Hashable {
    public var productId: String
    public var plan: BillingPlanType
    /// What the renewal charges, in minor units of the storefront's currency, before any continuing offer.
    public var priceMinorUnits: Int
    /// The billing period of a commitment the renewal is; nil when it is billed up front.
    public var commitment: TransactionCommitment?

    public init(productId: String, plan: BillingPlanType, priceMinorUnits: Int, commitment: TransactionCommitment?) {
        self.productId = productId
        self.plan = plan
        self.priceMinorUnits = priceMinorUnits
        self.commitment = commitment
    }
}

extension StoreSubscription {
    /// What the renewal at `at` bills in `storefront`, `product` being the one it renews into
    /// (``nextRenewalProductId``): while the commitment continues, its next billing period at its price (its end
    /// moved by the delay of a late renewal: Apple's "Managing the life cycle of monthly subscriptions with a
    /// 12-month commitment"); else ``termsAfterCommitment(into:in:at:rules:)``. Nil when the renewal cannot be sold.
    public func renewalTerms(into product: Product?, in storefront: Storefront, at: Date, rules: RenewalRules)
        -> RenewalTerms?
    {
        guard continuesCommitment, var next = commitment?.next else {
            return product.flatMap { termsAfterCommitment(into: $0, in: storefront, at: at, rules: rules) }
        }
        next.expiresDate += max(0, at.timeIntervalSince(expiresAt))
        return RenewalTerms(
            productId: productId, plan: .monthly, priceMinorUnits: next.periodPriceMinorUnits, commitment: next)
    }

    /// What a renewal at `at` into `product` (the customer's choice, ``autoRenewProductId``) under
    /// ``renewalBillingPlan`` bills once the current commitment (or period billed up front) is over: a new commitment
    /// at the monthly plan's price, or the product's period up front at the agreed renewal price (a consented
    /// increase) or the catalog's. Nil when `product` is not sold so in `storefront` (no price there, or no monthly
    /// plan priced there): the subscription cannot renew into it.
    public func termsAfterCommitment(into product: Product, in storefront: Storefront, at: Date, rules: RenewalRules)
        -> RenewalTerms?
    {
        switch renewalBillingPlan {
        case .monthly:
            guard let first = rules.newCommitment(to: product, in: storefront, from: at) else { return nil }
            return RenewalTerms(
                productId: product.productId, plan: .monthly, priceMinorUnits: first.periodPriceMinorUnits,
                commitment: first)
        case .billedUpFront:
            guard let price = product.pricing.price(in: storefront) else { return nil }
            return RenewalTerms(
                productId: product.productId, plan: .billedUpFront, priceMinorUnits: renewalPriceMinorUnits ?? price,
                commitment: nil)
        }
    }
}
