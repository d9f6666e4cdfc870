import ArgumentParser
import KioskCore

/// `--tier` and `--price`: the price flags of products and of subscription offers.
struct PriceOptions: ParsableArguments {
    @Option(help: "Price tier 1–20 of the built-in table.") var tier: Int?
    @Option(help: "A custom price point STOREFRONT=AMOUNT, e.g. CHN=6 or USA=0.99 (repeatable).") var price: [String] =
        []

    /// Whether neither flag was given.
    var isEmpty: Bool { tier == nil && price.isEmpty }

    /// The pricing the flags make of `current`: `--tier` replaces its tier, each `--price` sets one storefront's
    /// custom price; nil when neither flag was given.
    func pricing(over current: Pricing?) throws -> Pricing? {
        guard !isEmpty else { return nil }
        var pricing = current ?? Pricing()
        if let tier { pricing.tier = tier }
        for entry in price {
            let (code, amount) = try Self.customPrice(entry)
            pricing.customPrices[code] = amount
        }
        return pricing
    }

    /// `CHN=6` → ("CHN", 600): the amount is a decimal in the storefront's currency.
    static func customPrice(_ entry: String) throws -> (String, Int) {
        let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let storefront = Storefront.named(parts[0]) else {
            throw CLIError(
                message: "'\(entry)' is not STOREFRONT=AMOUNT with a known storefront.", field: "--price",
                fix: "Use e.g. --price USA=0.99 or --price CHN=6 (alpha-3 storefront codes).")
        }
        guard let amount = storefront.currency.minorUnits(decimalString: parts[1]), amount > 0 else {
            throw CLIError(
                message: "'\(parts[1])' is not a price in \(storefront.currency.code).", field: "--price",
                fix:
                    "\(storefront.currency.code) takes up to \(storefront.currency.minorUnitExponent) digits after the point."
            )
        }
        return (storefront.code, amount)
    }

    /// A pricing as the CLI prints it: `tier 3, USD 0.49 in USA`, each custom price in its storefront's currency.
    static func describe(_ pricing: Pricing) -> String {
        ([pricing.tier.map { "tier \($0)" }].compactMap { $0 }
            + pricing.customPrices.sorted { $0.key < $1.key }.map { code, minorUnits in
                let amount =
                    Storefront.named(code)?.currency.text(minorUnits: minorUnits) ?? "\(minorUnits) in minor units"
                return "\(amount) in \(code)"
            })
            .joined(separator: ", ")
    }
}
