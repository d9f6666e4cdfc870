extension Product {
    /// What the product still lacks before App Store Connect considers its metadata complete, as readable items
    /// ("a localization (display name and description)", …); empty when complete.
    ///
    /// Complete means: at least one localization with a display name and a description; a price (a tier or custom
    /// prices) that gives an amount in at least one of `storefronts`; and, for an auto-renewable subscription, a
    /// subscription group, a level of 1 or more and a duration.
    public func missingMetadata(storefronts: [Storefront] = Storefront.all) -> [String] {
        var missing: [String] = []
        let hasLocalization = localizations.contains {
            !$0.displayName.allSatisfy(\.isWhitespace) && !$0.description.allSatisfy(\.isWhitespace)
        }
        if !hasLocalization {
            missing.append("a localization (display name and description)")
        }
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
