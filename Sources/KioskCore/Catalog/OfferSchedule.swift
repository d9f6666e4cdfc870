import Foundation

/// What an offer charges and for how long: the terms introductory, promotional and win-back offers and offer codes
/// share, as App Store Connect sets them (payment mode, duration, number of periods, prices).
public struct OfferSchedule: Codable, Sendable, Hashable {
    public var paymentMode: OfferPaymentMode
    public var period: OfferPeriod
    public var numberOfPeriods: Int
    /// Ignored for free trials.
    public var pricing: Pricing

    public init(
        paymentMode: OfferPaymentMode, period: OfferPeriod, numberOfPeriods: Int = 1, pricing: Pricing = Pricing()
    ) {
        self.paymentMode = paymentMode
        self.period = period
        self.numberOfPeriods = numberOfPeriods
        self.pricing = pricing
    }

    private enum CodingKeys: String, CodingKey { case paymentMode, period, numberOfPeriods, pricing }

    /// `numberOfPeriods` defaults to 1 and `pricing` to none (free trials need none).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        paymentMode = try container.decode(OfferPaymentMode.self, forKey: .paymentMode)
        period = try container.decode(OfferPeriod.self, forKey: .period)
        numberOfPeriods = try container.decodeIfPresent(Int.self, forKey: .numberOfPeriods) ?? 1
        pricing = try container.decodeIfPresent(Pricing.self, forKey: .pricing) ?? Pricing()
    }

    /// What one offer period costs in `storefront`, in minor units: 0 for a free trial, nil when the offer has no
    /// price there.
    public func price(in storefront: Storefront) -> Int? {
        paymentMode == .freeTrial ? 0 : pricing.price(in: storefront)
    }

    /// The terms a purchase of the offer gets in `storefront`; nil when the offer has no price there.
    public func terms(_ type: OfferType, identifier: String?, in storefront: Storefront) -> OfferTerms? {
        price(in: storefront).map { price in
            OfferTerms(
                type: type, identifier: identifier, paymentMode: paymentMode, period: period,
                numberOfPeriods: numberOfPeriods, offerPrice: price)
        }
    }
}

/// An offer whose terms are an ``OfferSchedule``: its schedule's fields read as its own (`offer.period`), and its
/// JSON holds them beside its other fields.
@dynamicMemberLookup
public protocol ScheduledOffer {
    var schedule: OfferSchedule { get set }
}

extension ScheduledOffer {
    public subscript<T>(dynamicMember field: WritableKeyPath<OfferSchedule, T>) -> T {
        get { schedule[keyPath: field] }
        set { schedule[keyPath: field] = newValue }
    }
}
