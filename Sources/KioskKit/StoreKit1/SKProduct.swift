import Foundation
import KioskProtocol

/// A product on sale to the signed-in account, from an ``SKProductsRequest``.
public final class SKProduct: Sendable, CustomStringConvertible {
    public let productIdentifier: String
    public let localizedTitle: String
    public let localizedDescription: String
    /// The price in the storefront's currency, exact (parsed from the store's decimal text, never via `Double`).
    public let price: Decimal
    /// The storefront's locale, with its currency (`en_US@currency=USD`).
    public let priceLocale: Locale
    /// The length of one period of a subscription.
    public let subscriptionPeriod: SKProductSubscriptionPeriod?
    /// The introductory offer of an auto-renewable subscription.
    public let introductoryPrice: SKProductDiscount?
    /// The promotional offers of an auto-renewable subscription.
    public let discounts: [SKProductDiscount]
    public let subscriptionGroupIdentifier: String?
    public let isFamilyShareable: Bool
    /// Kiosk addition: ISO 4217 code of `price`.
    public let currencyCode: String
    /// Kiosk addition: `consumable`, `non_consumable`, `auto_renewable` or `non_renewing`.
    public let productType: String

    /// - Throws: ``KioskKitError`` `.invalidResponse` when a price is not a decimal number.
    init(_ info: ProductInfo) throws {
        productIdentifier = info.productId
        localizedTitle = info.localizedTitle
        localizedDescription = info.localizedDescription
        price = try info.price.exactDecimal()
        priceLocale = Locale(identifier: info.price.locale)
        currencyCode = info.price.currency
        productType = info.type
        subscriptionPeriod = info.subscriptionPeriod.flatMap(SKProductSubscriptionPeriod.init(iso8601:))
        introductoryPrice = try info.introductoryOffer.map {
            try SKProductDiscount($0, type: .introductory, product: info)
        }
        discounts = try info.promotionalOffers.map { try SKProductDiscount($0, type: .subscription, product: info) }
        subscriptionGroupIdentifier = info.subscriptionGroupIdentifier
        isFamilyShareable = info.isFamilyShareable
    }

    /// The price written for the user in the price locale, e.g. `$0.99` or `¥120`.
    public var localizedPrice: String {
        PriceFormatting.format(price, currencyCode: currencyCode, locale: priceLocale)
    }

    public var description: String { "SKProduct(\(productIdentifier), \(localizedPrice))" }
}

/// A subscription's period: a number of days, weeks, months or years.
public struct SKProductSubscriptionPeriod: Sendable, Hashable {
    public enum Unit: Int, Sendable {
        case day = 0, week = 1, month = 2, year = 3
    }

    public let numberOfUnits: Int
    public let unit: Unit

    /// Reads an ISO 8601 duration of one unit, e.g. `P1M`, `P7D`, `P1Y`; nil for any other shape.
    init?(iso8601 text: String) {
        guard text.count >= 3, text.hasPrefix("P"), let number = Int(text.dropFirst().dropLast()), number > 0 else {
            return nil
        }
        switch text.last {
        case "D": unit = .day
        case "W": unit = .week
        case "M": unit = .month
        case "Y": unit = .year
        default: return nil
        }
        numberOfUnits = number
    }
}

/// An introductory or promotional offer of a subscription.
public struct SKProductDiscount: Sendable {
    public enum PaymentMode: Int, Sendable {
        case payAsYouGo = 0, payUpFront = 1, freeTrial = 2
    }

    public enum `Type`: Int, Sendable {
        case introductory = 0, subscription = 1
    }

    /// The price per period (pay as you go), for all periods (pay up front), or zero (free trial).
    public let price: Decimal
    public let priceLocale: Locale
    /// The promotional offer's id; nil for the introductory offer.
    public let identifier: String?
    public let subscriptionPeriod: SKProductSubscriptionPeriod?
    public let numberOfPeriods: Int
    public let paymentMode: PaymentMode
    public let type: `Type`

    init(_ offer: OfferInfo, type: `Type`, product: ProductInfo) throws {
        price = try offer.price?.exactDecimal() ?? 0
        priceLocale = Locale(identifier: offer.price?.locale ?? product.price.locale)
        identifier = offer.identifier
        subscriptionPeriod = SKProductSubscriptionPeriod(iso8601: offer.period)
        numberOfPeriods = offer.numberOfPeriods
        paymentMode =
            switch offer.paymentMode {
            case "free_trial": .freeTrial
            case "pay_up_front": .payUpFront
            default: .payAsYouGo
            }
        self.type = type
    }
}
