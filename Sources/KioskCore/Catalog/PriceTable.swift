/// The built-in price tiers 1–20 of the console, in every storefront's currency.
///
/// Before 2023 App Store Connect priced a product by choosing one tier, which Apple converted into a fixed price
/// per currency (e.g. tier 1 was ¥6 in China, HK$8 in Hong Kong, US$0.99 in the United States). Apple changed
/// those tables with exchange rates and taxes and they were never published in a stable form, so Kiosk ships its
/// own, fixed table:
///
/// - USD follows Apple exactly: tier N = US$(N − 0.01).
/// - CNY, JPY and EUR are explicit ladders taken from Apple's pre-2022 tables (`ladders`).
/// - Every other currency follows a documented rule (`rules`): tier N = N × `step` − `charm` minor units, where
///   `step` is that currency's tier-1 amount rounded up to a round number and `charm` the customary ending taken
///   off it (1 minor unit turns 1.00 into 0.99; 0 keeps whole amounts such as HK$8 or ₩1,200). Tier 1 of each rule
///   is close to Apple's historic tier 1 in that currency.
///
/// Every price is a positive integer of minor units and strictly increases with the tier in every storefront.
/// A product's own custom prices override the tier per storefront (`Pricing.price(in:)`).
///
/// ```swift
/// PriceTable.price(tier: 1, in: Storefront.named("CHN")!)   // 600, ¥6.00
/// PriceTable.tier(matching: 99, in: Storefront.named("USA")!) // 1
/// ```
public enum PriceTable {
    /// The tiers the table holds.
    public static let tiers: ClosedRange<Int> = 1...20

    /// The price of `tier` in the storefront's currency, in minor units; nil for a tier outside `tiers` or a
    /// currency the table does not know.
    public static func price(tier: Int, in storefront: Storefront) -> Int? {
        price(tier: tier, currencyCode: storefront.currency.code)
    }

    /// The tier whose price in the storefront is exactly `minorUnits`, or nil if no tier costs that.
    public static func tier(matching minorUnits: Int, in storefront: Storefront) -> Int? {
        tiers.first { price(tier: $0, in: storefront) == minorUnits }
    }

    /// The price of `tier` in the currency with this ISO 4217 code, in minor units; nil if either is unknown.
    static func price(tier: Int, currencyCode: String) -> Int? {
        guard tiers.contains(tier) else { return nil }
        if let ladder = ladders[currencyCode] {
            return ladder[tier - tiers.lowerBound]
        }
        guard let rule = rules[currencyCode] else { return nil }
        return tier * rule.step - rule.charm
    }

    /// Explicit per-currency ladders, tiers 1–20 in order, in minor units.
    static let ladders: [String: [Int]] = [
        // Apple's China ladder: ¥6, ¥12, ¥18, ¥25, … ¥128.
        "CNY": [6, 12, 18, 25, 30, 40, 45, 50, 60, 68, 73, 78, 88, 93, 98, 108, 113, 118, 123, 128].map { $0 * 100 },
        // Apple's pre-2022 Japan ladder, whole yen (JPY has no minor unit).
        "JPY": [
            120, 250, 370, 490, 610, 730, 860, 980, 1100, 1200, 1300, 1500, 1600, 1700, 1800, 1900, 2000, 2200, 2300,
            2400,
        ],
        // Apple's euro ladder (tax included): €1.09, €2.29, €3.49, … then whole euros minus a cent.
        "EUR": [
            109, 229, 349, 449, 549, 699, 799, 899, 999, 1099, 1199, 1299, 1399, 1499, 1699, 1799, 1899, 1999, 2099,
            2199,
        ],
    ]

    /// A rule-priced currency: tier N costs N × `step` − `charm` minor units.
    struct Rule: Sendable {
        /// The amount each tier adds, in minor units.
        var step: Int
        /// What comes off every tier to reach the customary ending (0.99, 49, 3.90…); always below `step`.
        var charm: Int
    }

    /// The rules of every currency without an explicit ladder.
    static let rules: [String: Rule] = [
        "AED": Rule(step: 400, charm: 1),  // 3.99, 7.99, …
        "AUD": Rule(step: 150, charm: 1),  // A$1.49, A$2.99, …
        "BRL": Rule(step: 500, charm: 10),  // R$4.90, R$9.90, …
        "CAD": Rule(step: 140, charm: 1),  // C$1.39, C$2.79, …
        "CHF": Rule(step: 100, charm: 0),  // CHF 1.00, 2.00, …
        "CLP": Rule(step: 800, charm: 10),  // $790, $1.590, … (no minor unit)
        "COP": Rule(step: 500_000, charm: 10_000),  // $4.900, $9.900, …
        "CZK": Rule(step: 2500, charm: 100),  // 24 Kč, 49 Kč, …
        "DKK": Rule(step: 800, charm: 0),  // 8 kr, 16 kr, …
        "EGP": Rule(step: 1500, charm: 1),  // E£14.99, E£29.99, …
        "GBP": Rule(step: 100, charm: 1),  // £0.99, £1.99, …
        "HKD": Rule(step: 800, charm: 0),  // HK$8, HK$16, … (Apple's tier 1 was HK$8)
        "HUF": Rule(step: 30_000, charm: 100),  // 299 Ft, 599 Ft, …
        "IDR": Rule(step: 15_000, charm: 0),  // Rp 15.000, Rp 30.000, … (counted in whole rupiah)
        "ILS": Rule(step: 400, charm: 10),  // ₪3.90, ₪7.90, …
        "INR": Rule(step: 8000, charm: 100),  // ₹79, ₹159, …
        "KRW": Rule(step: 1200, charm: 0),  // ₩1,200, ₩2,400, … (no minor unit)
        "KZT": Rule(step: 39_000, charm: 0),  // 390 ₸, 780 ₸, …
        "MXN": Rule(step: 2000, charm: 100),  // $19, $39, …
        "MYR": Rule(step: 400, charm: 10),  // RM3.90, RM7.90, …
        "NGN": Rule(step: 40_000, charm: 0),  // ₦400, ₦800, …
        "NOK": Rule(step: 1000, charm: 100),  // 9 kr, 19 kr, …
        "NZD": Rule(step: 150, charm: 1),  // NZ$1.49, NZ$2.99, …
        "PEN": Rule(step: 400, charm: 10),  // S/3.90, S/7.90, …
        "PHP": Rule(step: 5000, charm: 100),  // ₱49, ₱99, …
        "PKR": Rule(step: 15_000, charm: 0),  // Rs 150, Rs 300, …
        "PLN": Rule(step: 500, charm: 1),  // 4.99 zł, 9.99 zł, …
        "QAR": Rule(step: 400, charm: 1),  // 3.99, 7.99, …
        "RON": Rule(step: 500, charm: 1),  // 4.99 lei, 9.99 lei, …
        "RUB": Rule(step: 7500, charm: 0),  // 75 ₽, 150 ₽, …
        "SAR": Rule(step: 400, charm: 1),  // 3.99, 7.99, …
        "SEK": Rule(step: 1000, charm: 100),  // 9 kr, 19 kr, …
        "SGD": Rule(step: 150, charm: 2),  // S$1.48, S$2.98, …
        "THB": Rule(step: 3500, charm: 0),  // ฿35, ฿70, …
        "TRY": Rule(step: 300, charm: 1),  // ₺2.99, ₺5.99, …
        "TWD": Rule(step: 3000, charm: 0),  // NT$30, NT$60, …
        "USD": Rule(step: 100, charm: 1),  // US$0.99, US$1.99, … exactly Apple's tier N = N − 0.01
        "VND": Rule(step: 22_000, charm: 0),  // 22.000 ₫, 44.000 ₫, … (no minor unit)
        "ZAR": Rule(step: 1500, charm: 1),  // R14.99, R29.99, …
    ]
}
