extension Product {
    /// What the product still lacks before it can be sold, as readable items ("a price (…)", …); empty when
    /// complete.
    ///
    /// Complete means: a price (a tier or custom prices) that gives an amount in at least one of `storefronts`;
    /// and, for an auto-renewable subscription, a subscription group, a level of 1 or more and a duration. Texts are
    /// App Store review's concern, not the sandbox's: a product without a localization sells in the sandbox, as in
    /// Xcode's StoreKit testing, and `CatalogValidator.reviewFindings(of:)` keeps it out of production.
    public func missingMetadata(storefronts: [Storefront] = Storefront.all) -> [String] {
        var missing: [String] = []
        if pricing.isEmpty {
            missing.append("a price (a tier from 1 to 20 or custom prices)")
        } else if !storefronts.contains(where: { pricing.price(in: $0) != nil }) {
            missing.append("a price that applies in at least one storefront")
        }
        if type == .autoRenewable {
            if let subscription {
                if subscription.level < 1 { missing.append("a subscription level of 1 or more") }
            } else {
                missing.append("a subscription group and level")
            }
            if duration == nil { missing.append("a subscription duration") }
        }
        return missing
    }

    /// Whether `missingMetadata(storefronts:)` is empty.
    public func hasCompleteMetadata(storefronts: [Storefront] = Storefront.all) -> Bool {
        missingMetadata(storefronts: storefronts).isEmpty
    }
}
