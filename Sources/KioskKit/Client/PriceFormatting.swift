import Foundation
import KioskProtocol

extension PriceInfo {
    /// The exact amount: `decimal` parsed as text (`"0.99"`, `"120"`), never through `Double`. A malformed
    /// text falls back to `minorUnits` scaled by the currency's digits.
    var decimalValue: Decimal {
        if let value = Decimal(string: decimal, locale: Locale(identifier: "en_US_POSIX")) { return value }
        let digits = PriceFormatting.fractionDigits(currencyCode: currency)
        return Decimal(sign: .plus, exponent: -digits, significand: Decimal(minorUnits))
    }
}

/// Prices written for people.
enum PriceFormatting {
    /// `price` as currency in `locale`, with the currency's own number of decimals (`$0.99`, `¥120`).
    static func format(_ price: Decimal, currencyCode: String, locale: Locale) -> String {
        price.formatted(.currency(code: currencyCode).locale(locale))
    }

    /// How many decimals a currency's minor unit has (2 for USD, 0 for JPY).
    static func fractionDigits(currencyCode: String) -> Int {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.currencyCode = currencyCode
        return formatter.maximumFractionDigits
    }

    /// Milliunits (the signed transaction's `price`) as an exact decimal: 990 → 0.99.
    static func decimal(milliunits: Int64) -> Decimal {
        Decimal(sign: milliunits < 0 ? .minus : .plus, exponent: -3, significand: Decimal(milliunits.magnitude))
    }
}
