import KioskCore
import Testing

@Suite("Storefront table")
struct StorefrontTableTests {
    /// The main storefronts' alpha-3 ↔ Apple id pairs, every one of which the table must hold.
    static let referencePairs: [(String, Int)] = [
        ("USA", 143441), ("FRA", 143442), ("DEU", 143443), ("GBR", 143444), ("AUT", 143445), ("BEL", 143446),
        ("FIN", 143447), ("GRC", 143448), ("IRL", 143449), ("ITA", 143450), ("LUX", 143451), ("NLD", 143452),
        ("PRT", 143453), ("NOR", 143457), ("CHE", 143459), ("AUS", 143460), ("NZL", 143461), ("JPN", 143462),
        ("HKG", 143463), ("SGP", 143464), ("CHN", 143465), ("KOR", 143466), ("IND", 143467), ("MEX", 143468),
        ("ESP", 143454), ("CAN", 143455), ("SWE", 143456), ("DNK", 143458), ("RUS", 143469), ("TWN", 143470),
        ("VNM", 143471), ("ZAF", 143472), ("MYS", 143473), ("PHL", 143474), ("THA", 143475), ("IDN", 143476),
        ("POL", 143478), ("SAU", 143479), ("TUR", 143480), ("ARE", 143481), ("BRA", 143503), ("CHL", 143483),
    ]

    // Proves every reference storefront is in the table with the Apple id the reference gives, both ways.
    @Test(arguments: referencePairs)
    func referenceStorefrontIsPresent(code: String, appleId: Int) throws {
        let storefront = try #require(Storefront.named(code))
        #expect(storefront.appleId == appleId)
        #expect(Storefront.named(appleId: appleId)?.code == code)
    }

    // Proves the table is large enough, ordered by code, and that codes and Apple ids are unique.
    @Test func tableIsOrderedAndUnique() {
        let codes = Storefront.all.map(\.code)
        #expect(codes.count >= 45)
        #expect(codes == codes.sorted())
        #expect(Set(codes).count == codes.count)
        #expect(Set(Storefront.all.map(\.appleId)).count == codes.count)
    }

    // Proves every row is well formed: a three-letter code, a name, an ISO-looking currency and a locale.
    @Test(arguments: Storefront.all)
    func rowIsWellFormed(storefront: Storefront) {
        #expect(storefront.code.count == 3 && storefront.code.allSatisfy { $0.isUppercase && $0.isASCII })
        #expect(!storefront.name.isEmpty)
        #expect(storefront.currency.code.count == 3)
        #expect([0, 2].contains(storefront.currency.minorUnitExponent))
        #expect(storefront.defaultLocale.split(separator: "_").count == 2)
        #expect((143441...143599).contains(storefront.appleId))
    }

    // Proves the currencies without decimals (ISO 4217, and IDR as Apple prices it) have exponent 0.
    @Test(arguments: [("JPN", "JPY"), ("KOR", "KRW"), ("CHL", "CLP"), ("VNM", "VND"), ("IDN", "IDR")])
    func zeroDecimalCurrencies(code: String, currency: String) throws {
        let storefront = try #require(Storefront.named(code))
        #expect(storefront.currency == Currency(code: currency, minorUnitExponent: 0))
    }

    // Proves the euro countries all share one EUR currency with two decimals.
    @Test func euroCountriesShareEUR() {
        let euro = ["AUT", "BEL", "DEU", "ESP", "FIN", "FRA", "GRC", "IRL", "ITA", "LUX", "NLD", "PRT"]
        for code in euro {
            #expect(Storefront.named(code)?.currency == Currency(code: "EUR", minorUnitExponent: 2), "\(code)")
        }
    }

    // Proves lookups ignore case and surrounding spaces, and answer nil for unknown codes and ids.
    @Test func lookups() {
        #expect(Storefront.named("usa")?.appleId == 143441)
        #expect(Storefront.named(" chn ")?.currency.code == "CNY")
        #expect(Storefront.named("XYZ") == nil)
        #expect(Storefront.named("") == nil)
        #expect(Storefront.named(appleId: 1) == nil)
    }
}
