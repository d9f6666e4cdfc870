import Foundation

/// How buying another product of a subscription group changes an active subscription (Apple's rules).
public enum SubscriptionMove: Sendable, Hashable {
    /// A higher level of service (lower level number), or a crossgrade to the same duration: takes effect now,
    /// the unused part of the current period is refunded pro rata.
    case immediate(isUpgrade: Bool)
    /// A lower level of service, or a crossgrade to another duration: takes effect at the next renewal.
    case atNextRenewal(isDowngrade: Bool)

    /// The move from `current` to `target`, both members of one group.
    public static func from(
        _ current: SubscriptionMembership, duration currentDuration: SubscriptionDuration?,
        to target: SubscriptionMembership, duration targetDuration: SubscriptionDuration?
    ) -> SubscriptionMove {
        if target.level < current.level { return .immediate(isUpgrade: true) }
        if target.level > current.level { return .atNextRenewal(isDowngrade: true) }
        return currentDuration == targetDuration ? .immediate(isUpgrade: false) : .atNextRenewal(isDowngrade: false)
    }

    /// Apple's `DID_CHANGE_RENEWAL_PREF` subtype: `UPGRADE` for moves that take effect now, `DOWNGRADE` for the
    /// others.
    public var notificationSubtype: NotificationSubtype {
        switch self {
        case .immediate: .upgrade
        case .atNextRenewal: .downgrade
        }
    }
}

/// Money rules of subscription purchases, in integer minor units.
public enum SubscriptionProration {
    /// The unused part of a period's price when it ends early at `now`: `price × remaining ÷ length`, counted in
    /// whole milliseconds and rounded down; 0 outside the period.
    public static func unusedMinorUnits(price: Int, periodStart: Date, periodEnd: Date, now: Date) -> Int {
        let length = periodEnd.millisecondsSince1970 - periodStart.millisecondsSince1970
        let remaining = periodEnd.millisecondsSince1970 - now.millisecondsSince1970
        guard length > 0, remaining > 0, price > 0 else { return 0 }
        // price × remaining can pass Int64 (a large price over a year of milliseconds); the quotient never
        // exceeds the price, so it is computed at full width.
        let product = Int64(price).multipliedFullWidth(by: min(remaining, length))
        return Int(length.dividingFullWidth(product).quotient)
    }
}

extension IntroductoryOffer {
    /// The account's introductory offer of `product` in `storefront` (alpha-3): the storefront's own offer,
    /// else the one for every storefront.
    public static func applicable(to product: Product, in storefront: String) -> IntroductoryOffer? {
        product.introductoryOffers.first { $0.storefront == storefront }
            ?? product.introductoryOffers.first { $0.storefront == nil }
    }
}

/// What an offer makes the first period of a subscription cost and last.
public struct OfferTerms: Sendable, Hashable {
    /// The price charged now, in minor units.
    public var priceMinorUnits: Int
    /// How many offer periods this charge covers: all of them paid up front or free, one pay as you go.
    public var periodsCovered: Int
    /// Offer periods left for later renewals to continue (pay as you go only).
    public var periodsRemaining: Int
    public var applied: AppliedOffer
    public var period: OfferPeriod

    /// The terms of an offer with `paymentMode`, `period` × `numberOfPeriods` and a price per period
    /// (`offerPrice`; ignored for free trials).
    public init(
        type: OfferType, identifier: String?, paymentMode: OfferPaymentMode, period: OfferPeriod, numberOfPeriods: Int,
        offerPrice: Int
    ) {
        self.period = period
        switch paymentMode {
        case .freeTrial:
            priceMinorUnits = 0
            periodsCovered = numberOfPeriods
            periodsRemaining = 0
        case .payUpFront:
            priceMinorUnits = offerPrice
            periodsCovered = numberOfPeriods
            periodsRemaining = 0
        case .payAsYouGo:
            priceMinorUnits = offerPrice
            periodsCovered = 1
            periodsRemaining = max(0, numberOfPeriods - 1)
        }
        applied = AppliedOffer(type: type, identifier: identifier, paymentMode: paymentMode, period: period.iso8601)
    }

    /// The terms of an offer on a one-time purchase (an in-app purchase's offer code): one price, no period.
    public static func oneTime(identifier: String, priceMinorUnits: Int) -> OfferTerms {
        var terms = OfferTerms(
            type: .offerCode, identifier: identifier, paymentMode: .payUpFront,
            period: OfferPeriod(count: 1, unit: .day),
            numberOfPeriods: 1, offerPrice: priceMinorUnits)
        terms.applied.period = nil
        return terms
    }

    /// When the charged part of the offer, starting at `start`, ends.
    public func end(from start: Date, environment: StoreEnvironment) -> Date {
        var end = start
        for _ in 0..<periodsCovered { end = period.end(from: end, environment: environment) }
        return end
    }
}

extension OfferPeriod {
    /// When one offer period that starts at `start` ends: calendar periods in UTC in production; in the sandbox
    /// Apple's accelerated time (3 days last 2 minutes, a week 3, a month 5, a year 60), scaled by `count`.
    public func end(from start: Date, environment: StoreEnvironment) -> Date {
        switch environment {
        case .sandbox:
            let seconds: TimeInterval =
                switch unit {
                case .day: 40
                case .week: 3 * 60
                case .month: 5 * 60
                case .year: 60 * 60
                }
            return start + seconds * TimeInterval(count)
        case .production:
            let calendar = Calendar.utc
            let components: DateComponents =
                switch unit {
                case .day: DateComponents(day: count)
                case .week: DateComponents(day: 7 * count)
                case .month: DateComponents(month: count)
                case .year: DateComponents(year: count)
                }
            return calendar.date(byAdding: components, to: start)!
        }
    }
}

extension Product {
    /// What one period of `offer` costs in `storefront`, in minor units, when the offer is still defined on this
    /// product: an introductory offer for the storefront (or for all), or the promotional or win-back offer of that
    /// identifier.
    public func price(of offer: AppliedOffer, in storefront: Storefront) -> Int? {
        let pricing: Pricing? =
            switch offer.type {
            case .introductory:
                (introductoryOffers.first { $0.storefront == storefront.code }
                    ?? introductoryOffers.first { $0.storefront == nil })?.pricing
            case .promotional:
                promotionalOffers.first { $0.identifier == offer.identifier }?.pricing
            case .winBack:
                winBackOffers.first { $0.identifier == offer.identifier }?.pricing
            case .offerCode, .retention:
                // Offer codes and retention offers are kept beside the product, not in it.
                nil
            }
        return offer.paymentMode == .freeTrial ? 0 : pricing?.price(in: storefront)
    }
}
