import Foundation
import KioskProtocol
import Testing

@testable import KioskKit

@Suite struct PriceTests {
    /// Prices are parsed from the store's decimal text exactly, never through floating point.
    @Test func decimalText() throws {
        let cents = PriceInfo(
            minorUnits: 99, decimal: "0.99", currency: "USD", storefront: "USA", locale: "en_US@currency=USD")
        #expect(try cents.exactDecimal() == Decimal(sign: .plus, exponent: -2, significand: 99))
        #expect(try cents.exactDecimal() * 3 == Decimal(string: "2.97"))
        let yen = PriceInfo(
            minorUnits: 120, decimal: "120", currency: "JPY", storefront: "JPN", locale: "ja_JP@currency=JPY")
        #expect(try yen.exactDecimal() == 120)
    }

    /// A price text that is not a plain decimal is refused rather than guessed.
    @Test(arguments: ["", "1,99", "1.5e3", "abc"])
    func malformedText(text: String) {
        let price = PriceInfo(minorUnits: 199, decimal: text, currency: "USD", storefront: "USA", locale: "en_US")
        #expect(throws: KioskKitError.self) { try price.exactDecimal() }
    }

    /// Formatting follows the price locale: dollars with cents, yen without decimals.
    @Test func formatting() {
        let dollars = PriceFormatting.format(
            Decimal(string: "0.99")!, currencyCode: "USD", locale: Locale(identifier: "en_US@currency=USD"))
        #expect(dollars == "$0.99")
        let yen = PriceFormatting.format(120, currencyCode: "JPY", locale: Locale(identifier: "ja_JP@currency=JPY"))
        #expect(yen.contains("120") && !yen.contains(".") && (yen.contains("¥") || yen.contains("￥")), "\(yen)")
    }

    /// Signed transactions carry milliunits: 990 is 0.99 exactly.
    @Test func milliunits() {
        #expect(PriceFormatting.decimal(milliunits: 990) == Decimal(string: "0.99"))
        #expect(PriceFormatting.decimal(milliunits: 120_000) == 120)
        #expect(PriceFormatting.decimal(milliunits: -10_990) == Decimal(string: "-10.99"))
    }

    /// An SKProduct exposes the exact price, the price locale and a formatted price, and reads subscription periods.
    @Test func skProduct() throws {
        let info = ProductInfo(
            productId: "com.example.pro", type: "auto_renewable", localizedTitle: "Pro",
            localizedDescription: "All of it",
            textLocale: "en_US",
            price: PriceInfo(
                minorUnits: 499, decimal: "4.99", currency: "USD", storefront: "USA", locale: "en_US@currency=USD"),
            subscriptionPeriod: "P1M", subscriptionGroupIdentifier: "pro",
            introductoryOffer: OfferInfo(
                identifier: nil, paymentMode: "free_trial", period: "P1W", numberOfPeriods: 1, price: nil))
        let product = try SKProduct(info)
        #expect(product.price == Decimal(string: "4.99"))
        #expect(product.priceLocale.identifier.hasPrefix("en_US"))
        #expect(product.localizedPrice == "$4.99")
        #expect(product.subscriptionPeriod == SKProductSubscriptionPeriod(iso8601: "P1M"))
        #expect(product.subscriptionPeriod?.unit == .month && product.subscriptionPeriod?.numberOfUnits == 1)
        #expect(product.introductoryPrice?.paymentMode == .freeTrial && product.introductoryPrice?.price == 0)
        #expect(product.introductoryPrice?.subscriptionPeriod?.unit == .week)
        #expect(SKProductSubscriptionPeriod(iso8601: "P7D")?.numberOfUnits == 7)
        #expect(SKProductSubscriptionPeriod(iso8601: "P1Y2M") == nil)
    }
}
