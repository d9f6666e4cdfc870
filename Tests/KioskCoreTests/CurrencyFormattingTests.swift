import KioskCore
import Testing

@Suite("Currency formatting")
struct CurrencyFormattingTests {
    static let usd = Currency(code: "USD", minorUnitExponent: 2)
    static let jpy = Currency(code: "JPY", minorUnitExponent: 0)
    static let kwd = Currency(code: "KWD", minorUnitExponent: 3)

    // Proves minor units print with exactly the currency's digits, padded, with a sign for negatives.
    @Test(arguments: [
        (usd, 99, "0.99"), (usd, 600, "6.00"), (usd, 5, "0.05"), (usd, 0, "0.00"), (usd, 123_456, "1234.56"),
        (usd, -99, "-0.99"), (usd, -1, "-0.01"), (jpy, 120, "120"), (jpy, 0, "0"), (jpy, -5, "-5"),
        (kwd, 1_250, "1.250"), (kwd, 7, "0.007"),
    ])
    func decimalString(currency: Currency, minorUnits: Int, expected: String) {
        #expect(currency.decimalString(minorUnits: minorUnits) == expected)
    }

    // Proves decimal strings parse to minor units, trailing zeros beyond the currency's digits being harmless.
    @Test(arguments: [
        (usd, "0.99", 99), (usd, "6", 600), (usd, "6.0", 600), (usd, "6.00", 600), (usd, "6.000", 600),
        (usd, "1234.56", 123_456), (usd, "0", 0), (jpy, "120", 120), (jpy, "120.0", 120), (kwd, "1.25", 1_250),
    ])
    func parses(currency: Currency, text: String, expected: Int) {
        #expect(currency.minorUnits(decimalString: text) == expected)
    }

    // Proves malformed text and too many significant decimals are refused rather than rounded.
    @Test(arguments: [
        (usd, ""), (usd, "."), (usd, ".5"), (usd, "1."), (usd, "0.999"), (usd, "1.2.3"), (usd, "-1"), (usd, "+1"),
        (usd, " 1"), (usd, "1e2"), (usd, "abc"), (usd, "١٢"), (jpy, "120.5"), (usd, "99999999999999999999"),
    ])
    func refuses(currency: Currency, text: String) {
        #expect(currency.minorUnits(decimalString: text) == nil)
    }

    // Proves printing then parsing gives back the same amount for every tier price of every storefront.
    @Test(arguments: Storefront.all)
    func roundTripsEveryTierPrice(storefront: Storefront) {
        for tier in PriceTable.tiers {
            guard let price = PriceTable.price(tier: tier, in: storefront) else {
                Issue.record("no price for tier \(tier) in \(storefront.code)")
                continue
            }
            let text = storefront.currency.decimalString(minorUnits: price)
            #expect(storefront.currency.minorUnits(decimalString: text) == price)
        }
    }
}

@Suite("Amounts as people read them")
struct CurrencyTextTests {
    // Proves an amount for people is the code and the currency's decimal, never a bare count of minor units, and
    // that a currency without minor digits (JPY) prints none.
    @Test(arguments: [
        (49, "USD", "USD 0.49"), (120, "JPY", "JPY 120"), (-99, "USD", "USD -0.99"), (600, "CNY", "CNY 6.00"),
        (1_250, "XTS", "XTS 12.50"),
    ])
    func text(minorUnits: Int, code: String, expected: String) {
        #expect(Currency.text(minorUnits: minorUnits, code: code) == expected)
    }
}
