/// An ISO 4217 currency and the number of digits after its decimal point (JPY and KRW have none).
public struct Currency: Codable, Sendable, Hashable {
    public var code: String
    public var minorUnitExponent: Int

    public init(code: String, minorUnitExponent: Int) {
        self.code = code
        self.minorUnitExponent = minorUnitExponent
    }
}

/// A country's App Store. The built-in table is `Storefront.all` (in `Storefront+Table.swift`).
public struct Storefront: Sendable, Hashable {
    /// ISO 3166-1 alpha-3, e.g. `USA`; what Apple writes in `storefront`.
    public var code: String
    /// Apple's numeric storefront id, e.g. 143441; what Apple writes (as a string) in `storefrontId`.
    public var appleId: Int
    public var name: String
    public var currency: Currency
    /// The locale whose texts and number format the storefront uses by default, e.g. `en_US`.
    public var defaultLocale: String

    public init(code: String, appleId: Int, name: String, currency: Currency, defaultLocale: String) {
        self.code = code
        self.appleId = appleId
        self.name = name
        self.currency = currency
        self.defaultLocale = defaultLocale
    }
}
