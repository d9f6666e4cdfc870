import Foundation

/// How a storefront taxes what it sells, from `effectiveFrom` on: whether its prices include the tax (most
/// storefronts' do; the United States' and Canada's do not, tax is added at checkout) and the combined rate.
///
/// Kiosk ships a default per storefront (``defaults``, its own table of standard consumption-tax rates, not tax
/// advice); an operator's rules override it from their effective date on, so a report of an earlier day keeps the
/// rate that applied then.
public struct TaxRule: Codable, Sendable, Hashable {
    /// ISO 3166-1 alpha-3, e.g. `GBR`.
    public var storefront: String
    /// The first instant the rule applies; `distantPast` for a built-in default.
    public var effectiveFrom: Date
    public var pricesIncludeTax: Bool
    /// The combined rate in hundredths of a percent: 2000 is 20%, 810 is 8.1%.
    public var rateBasisPoints: Int

    public init(storefront: String, effectiveFrom: Date, pricesIncludeTax: Bool, rateBasisPoints: Int) {
        self.storefront = storefront
        self.effectiveFrom = effectiveFrom
        self.pricesIncludeTax = pricesIncludeTax
        self.rateBasisPoints = rateBasisPoints
    }

    /// Rates from 0 to 100%.
    public static let rateRange = 0...10_000

    /// The rule in force for `storefront` at `date`: the latest of `rules` (any storefront's) effective by then,
    /// else the built-in default, else a tax-inclusive 0% for a storefront the table lacks.
    public static func inForce(for storefront: String, at date: Date, among rules: [TaxRule]) -> TaxRule {
        let chosen = rules.filter { $0.storefront == storefront && $0.effectiveFrom <= date }
            .max { $0.effectiveFrom < $1.effectiveFrom }
        return chosen ?? defaultRule(for: storefront)
    }

    /// The built-in rule of `storefront`.
    public static func defaultRule(for storefront: String) -> TaxRule {
        let (inclusive, rate) = defaults[storefront] ?? (true, 0)
        return TaxRule(
            storefront: storefront, effectiveFrom: .distantPast, pricesIncludeTax: inclusive, rateBasisPoints: rate)
    }

    /// Kiosk's default table: standard VAT/GST rates as of 2026 for every built-in storefront. The United States'
    /// and Canada's sales taxes differ by state and province and are added on top of the price, so their proceeds
    /// do not depend on them: 0% there. Storefronts whose digital sales carry no consumption tax Kiosk knows of
    /// (Hong Kong, Qatar, Pakistan, Brazil's varying municipal tax) are 0% as well. Edit any with `kiosk tax set`.
    public static let defaults: [String: (pricesIncludeTax: Bool, rateBasisPoints: Int)] = [
        "ARE": (true, 500), "AUS": (true, 1_000), "AUT": (true, 2_000), "BEL": (true, 2_100), "BRA": (true, 0),
        "CAN": (false, 0), "CHE": (true, 810), "CHL": (true, 1_900), "CHN": (true, 600), "COL": (true, 1_900),
        "CYP": (true, 1_900), "CZE": (true, 2_100), "DEU": (true, 1_900), "DNK": (true, 2_500), "EGY": (true, 1_400),
        "ESP": (true, 2_100), "EST": (true, 2_400), "FIN": (true, 2_550), "FRA": (true, 2_000), "GBR": (true, 2_000),
        "GRC": (true, 2_400), "HKG": (true, 0), "HRV": (true, 2_500), "HUN": (true, 2_700), "IDN": (true, 1_100),
        "IND": (true, 1_800), "IRL": (true, 2_300), "ISR": (true, 1_800), "ITA": (true, 2_200), "JPN": (true, 1_000),
        "KAZ": (true, 1_200), "KOR": (true, 1_000), "LTU": (true, 2_100), "LUX": (true, 1_700), "LVA": (true, 2_100),
        "MEX": (true, 1_600), "MLT": (true, 1_800), "MYS": (true, 800), "NGA": (true, 750), "NLD": (true, 2_100),
        "NOR": (true, 2_500), "NZL": (true, 1_500), "PAK": (true, 0), "PER": (true, 1_800), "PHL": (true, 1_200),
        "POL": (true, 2_300), "PRT": (true, 2_300), "QAT": (true, 0), "ROU": (true, 2_100), "RUS": (true, 2_000),
        "SAU": (true, 1_500), "SGP": (true, 900), "SVK": (true, 2_300), "SVN": (true, 2_200), "SWE": (true, 2_500),
        "THA": (true, 700), "TUR": (true, 2_000), "TWN": (true, 500), "USA": (false, 0), "VNM": (true, 1_000),
        "ZAF": (true, 1_500),
    ]
}
