// PLACEHOLDER: the full table (≥ 40 storefronts) replaces this file.
extension Storefront {
    /// Every storefront Kiosk knows, ordered by code.
    public static let all: [Storefront] = [
        Storefront(code: "CHN", appleId: 143465, name: "China mainland", currency: Currency(code: "CNY", minorUnitExponent: 2), defaultLocale: "zh_CN"),
        Storefront(code: "HKG", appleId: 143463, name: "Hong Kong", currency: Currency(code: "HKD", minorUnitExponent: 2), defaultLocale: "zh_HK"),
        Storefront(code: "JPN", appleId: 143462, name: "Japan", currency: Currency(code: "JPY", minorUnitExponent: 0), defaultLocale: "ja_JP"),
        Storefront(code: "USA", appleId: 143441, name: "United States", currency: Currency(code: "USD", minorUnitExponent: 2), defaultLocale: "en_US"),
    ]

    /// The storefront with this alpha-3 code (case-insensitive), or nil.
    public static func named(_ code: String) -> Storefront? {
        let upper = code.uppercased()
        return all.first { $0.code == upper }
    }
}
