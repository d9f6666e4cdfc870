import Foundation
import KioskProtocol

extension PriceInfo {
    /// The exact amount: `decimal` parsed as text (`"0.99"`, `"120"`), never through `Double`.
    ///
    /// - Throws: ``KioskKitError`` `.invalidResponse` when the text is not a decimal number.
    func exactDecimal() throws -> Decimal {
        guard let value = Decimal(string: decimal, locale: Locale(identifier: "en_US_POSIX")),
            decimal.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" })
        else {
            throw KioskKitError(code: .invalidResponse, message: "The store sent the price \"\(decimal)\" \(currency).")
        }
        return value
    }
}

/// Prices written for people.
enum PriceFormatting {
    /// `price` as currency in `locale`, with the currency's own number of decimals (`$0.99`, `¥120`).
    static func format(_ price: Decimal, currencyCode: String, locale: Locale) -> String {
        price.formatted(.currency(code: currencyCode).locale(locale))
    }

    /// Milliunits (the signed transaction's `price`) as an exact decimal: 990 → 0.99.
    static func decimal(milliunits: Int64) -> Decimal {
        Decimal(sign: milliunits < 0 ? .minus : .plus, exponent: -3, significand: Decimal(milliunits.magnitude))
    }
}
