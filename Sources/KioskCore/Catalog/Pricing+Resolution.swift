extension Pricing {
    /// What this pricing charges in `storefront`, in minor units of its currency.
    ///
    /// A custom price for the storefront (its alpha-3 code, matched case-insensitively) wins; otherwise the tier's
    /// price from `PriceTable`; nil when neither gives a positive amount (no tier, a tier outside 1–20, or a custom
    /// price that is not positive — validation reports those).
    public func price(in storefront: Storefront) -> Int? {
        if let custom = customPrice(for: storefront.code) {
            return custom > 0 ? custom : nil
        }
        guard let tier else { return nil }
        return PriceTable.price(tier: tier, in: storefront)
    }

    /// The custom price whose key names `code`, ignoring case; an exact key wins over a differently cased one.
    private func customPrice(for code: String) -> Int? {
        if let exact = customPrices[code] { return exact }
        return customPrices.first { $0.key.uppercased() == code }?.value
    }
}
