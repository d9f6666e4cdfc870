import Foundation

// The catalog file's JSON shape. Keys no decoder here asks for are refused (`StrictJSONDecoding`), so a typo is an
// error with its path rather than silently dropped data; optional keys are omitted when empty, which keeps the bytes
// stable.

extension CatalogDocument {
    private enum Keys: String, CodingKey {
        case format, version, app, subscriptionGroups, products
    }

    /// Reads a document, checking its format name and version first.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let format = try container.decode(String.self, forKey: .format)
        guard format == Self.format else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container,
                debugDescription: "'\(format)' is not a Kiosk catalog (expected '\(Self.format)')")
        }
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.currentVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription:
                    "version \(version) is not supported (this Kiosk reads version \(Self.currentVersion))")
        }
        // The file's order is kept, so errors found later (`products[3]…`) point at the entry as the file has it.
        app = try container.decode(AppEntry.self, forKey: .app)
        subscriptionGroups = try container.decode([GroupEntry].self, forKey: .subscriptionGroups)
        products = try container.decode([ProductEntry].self, forKey: .products)
    }

    /// Writes the document with its format name and version.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.format, forKey: .format)
        try container.encode(Self.currentVersion, forKey: .version)
        try container.encode(app, forKey: .app)
        try container.encode(subscriptionGroups, forKey: .subscriptionGroups)
        try container.encode(products, forKey: .products)
    }
}

extension CatalogDocument.AppEntry: Codable {
    private enum Keys: String, CodingKey {
        case bundleId, name
    }

    /// Reads `{"bundleId", "name"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            bundleId: try container.decode(String.self, forKey: .bundleId),
            name: try container.decode(String.self, forKey: .name))
    }

    /// Writes `{"bundleId", "name"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(bundleId, forKey: .bundleId)
        try container.encode(name, forKey: .name)
    }
}

extension CatalogDocument.GroupEntry: Codable {
    private enum Keys: String, CodingKey {
        case referenceName, localizations
    }

    /// Reads `{"referenceName", "localizations": [{"locale", "name", "customAppName"?}]}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            referenceName: try container.decode(String.self, forKey: .referenceName),
            localizations: try container.decode([SubscriptionGroupLocalization].self, forKey: .localizations))
    }

    /// Writes the group entry.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(referenceName, forKey: .referenceName)
        try container.encode(localizations, forKey: .localizations)
    }
}

extension CatalogDocument.ProductEntry: Codable {
    private enum Keys: String, CodingKey {
        case productId, referenceName, type, pricing, localizations, clearedForSale, familyShareable, reviewState
        case subscription, duration, introductoryOffers, promotionalOffers, winBackOffers, monthlyPlan
        case territoryAvailability
    }

    /// Reads a product entry; `reviewState`, `subscription`, `duration`, the offer lists, `monthlyPlan` and
    /// `territoryAvailability` are optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let reviewState: ReviewState? =
            container.contains(.reviewState)
            ? try CatalogFileCoding.decodeEnum(ReviewState.self, in: container, forKey: .reviewState) : nil
        let duration: SubscriptionDuration? =
            container.contains(.duration)
            ? try CatalogFileCoding.decodeEnum(SubscriptionDuration.self, in: container, forKey: .duration) : nil
        self.init(
            productId: try container.decode(String.self, forKey: .productId),
            referenceName: try container.decode(String.self, forKey: .referenceName),
            type: try CatalogFileCoding.decodeEnum(ProductType.self, in: container, forKey: .type),
            pricing: try container.decode(PricingCoding.self, forKey: .pricing).value,
            localizations: try container.decode([ProductLocalization].self, forKey: .localizations),
            clearedForSale: try container.decode(Bool.self, forKey: .clearedForSale),
            familyShareable: try container.decode(Bool.self, forKey: .familyShareable),
            reviewState: reviewState,
            subscription: try container.decodeIfPresent(Membership.self, forKey: .subscription),
            duration: duration,
            introductoryOffers: try container.decodeIfPresent(
                [IntroductoryOfferCoding].self, forKey: .introductoryOffers)?.map(\.value) ?? [],
            promotionalOffers: try container.decodeIfPresent(
                [PromotionalOfferCoding].self, forKey: .promotionalOffers)?.map(\.value) ?? [],
            winBackOffers: try container.decodeIfPresent(
                [WinBackOfferCoding].self, forKey: .winBackOffers)?.map(\.value) ?? [],
            monthlyPlan: try container.decodeIfPresent(MonthlyPlanCoding.self, forKey: .monthlyPlan)?.value,
            territoryAvailability: try container.decodeIfPresent(
                TerritoryAvailability.self, forKey: .territoryAvailability))
    }

    /// Writes the product entry, leaving out optional keys that are empty.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(productId, forKey: .productId)
        try container.encode(referenceName, forKey: .referenceName)
        try container.encode(type.rawValue, forKey: .type)
        try container.encode(PricingCoding(value: pricing), forKey: .pricing)
        try container.encode(localizations, forKey: .localizations)
        try container.encode(clearedForSale, forKey: .clearedForSale)
        try container.encode(familyShareable, forKey: .familyShareable)
        try container.encodeIfPresent(reviewState?.rawValue, forKey: .reviewState)
        try container.encodeIfPresent(subscription, forKey: .subscription)
        try container.encodeIfPresent(duration?.rawValue, forKey: .duration)
        if !introductoryOffers.isEmpty {
            try container.encode(introductoryOffers.map(IntroductoryOfferCoding.init), forKey: .introductoryOffers)
        }
        if !promotionalOffers.isEmpty {
            try container.encode(promotionalOffers.map(PromotionalOfferCoding.init), forKey: .promotionalOffers)
        }
        if !winBackOffers.isEmpty {
            try container.encode(winBackOffers.map(WinBackOfferCoding.init), forKey: .winBackOffers)
        }
        try container.encodeIfPresent(monthlyPlan.map(MonthlyPlanCoding.init), forKey: .monthlyPlan)
        try container.encodeIfPresent(territoryAvailability, forKey: .territoryAvailability)
    }
}

/// A monthly plan as the catalog file writes it: `{"pricing": {"tier"?, "customPrices"?}}`, the monthly payment.
struct MonthlyPlanCoding: Codable {
    var value: MonthlyPlan

    private enum Keys: String, CodingKey {
        case pricing
    }

    init(value: MonthlyPlan) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = MonthlyPlan(pricing: try container.decode(PricingCoding.self, forKey: .pricing).value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(PricingCoding(value: value.pricing), forKey: .pricing)
    }
}

extension CatalogDocument.ProductEntry.Membership: Codable {
    private enum Keys: String, CodingKey {
        case group, level
    }

    /// Reads `{"group": "<reference name>", "level": 1}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            group: try container.decode(String.self, forKey: .group),
            level: try container.decode(Int.self, forKey: .level))
    }

    /// Writes `{"group", "level"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(group, forKey: .group)
        try container.encode(level, forKey: .level)
    }
}

/// `Pricing` as the catalog file writes it: `{"tier"?: 3, "customPrices"?: {"USA": 299}}`.
struct PricingCoding: Codable {
    var value: Pricing

    private enum Keys: String, CodingKey {
        case tier, customPrices
    }

    init(value: Pricing) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = Pricing(
            tier: try container.decodeIfPresent(Int.self, forKey: .tier),
            customPrices: try container.decodeIfPresent([String: Int].self, forKey: .customPrices) ?? [:])
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(value.tier, forKey: .tier)
        if !value.customPrices.isEmpty { try container.encode(value.customPrices, forKey: .customPrices) }
    }
}

/// `OfferSchedule` as the catalog file writes it, beside each offer's own keys:
/// `{"paymentMode", "period", "numberOfPeriods", "pricing"?}`.
struct OfferScheduleCoding: Codable {
    var value: OfferSchedule

    private enum Keys: String, CodingKey {
        case paymentMode, period, numberOfPeriods, pricing
    }

    init(value: OfferSchedule) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = OfferSchedule(
            paymentMode: try CatalogFileCoding.decodeEnum(OfferPaymentMode.self, in: container, forKey: .paymentMode),
            period: try container.decode(OfferPeriod.self, forKey: .period),
            numberOfPeriods: try container.decode(Int.self, forKey: .numberOfPeriods),
            pricing: try container.decodeIfPresent(PricingCoding.self, forKey: .pricing)?.value ?? Pricing())
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(value.paymentMode.rawValue, forKey: .paymentMode)
        try container.encode(value.period, forKey: .period)
        try container.encode(value.numberOfPeriods, forKey: .numberOfPeriods)
        if !value.pricing.isEmpty { try container.encode(PricingCoding(value: value.pricing), forKey: .pricing) }
    }
}

/// `IntroductoryOffer` as `{"storefront"?, "paymentMode", "period", "numberOfPeriods", "pricing"?}`.
struct IntroductoryOfferCoding: Codable {
    var value: IntroductoryOffer

    private enum Keys: String, CodingKey {
        case storefront
    }

    init(value: IntroductoryOffer) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = IntroductoryOffer(
            storefront: try container.decodeIfPresent(String.self, forKey: .storefront),
            schedule: try OfferScheduleCoding(from: decoder).value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(value.storefront, forKey: .storefront)
        try OfferScheduleCoding(value: value.schedule).encode(to: encoder)
    }
}

/// `PromotionalOffer` as `{"identifier", "referenceName", "paymentMode", "period", "numberOfPeriods", "pricing"?}`.
struct PromotionalOfferCoding: Codable {
    var value: PromotionalOffer

    private enum Keys: String, CodingKey {
        case identifier, referenceName
    }

    init(value: PromotionalOffer) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = PromotionalOffer(
            identifier: try container.decode(String.self, forKey: .identifier),
            referenceName: try container.decode(String.self, forKey: .referenceName),
            schedule: try OfferScheduleCoding(from: decoder).value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(value.identifier, forKey: .identifier)
        try container.encode(value.referenceName, forKey: .referenceName)
        try OfferScheduleCoding(value: value.schedule).encode(to: encoder)
    }
}

/// `WinBackOffer` as `{"identifier", "referenceName", "paymentMode", "period", "numberOfPeriods", "pricing"?,
/// "paidSubscriptionDurationInMonths", "timeSinceLastSubscribedInMonths": {"minimum", "maximum"?},
/// "waitBetweenOffersInMonths"?, "startDate"?, "endDate"?, "priority"}`, dates as ISO 8601 texts.
struct WinBackOfferCoding: Codable {
    var value: WinBackOffer

    private enum Keys: String, CodingKey {
        case identifier, referenceName
        case paidSubscriptionDurationInMonths, timeSinceLastSubscribedInMonths, waitBetweenOffersInMonths
        case startDate, endDate, priority
    }

    /// `{"minimum", "maximum"?}`.
    struct MonthRangeCoding: Codable {
        var value: WinBackOffer.MonthRange

        private enum Keys: String, CodingKey {
            case minimum, maximum
        }

        init(value: WinBackOffer.MonthRange) { self.value = value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            value = WinBackOffer.MonthRange(
                minimum: try container.decode(Int.self, forKey: .minimum),
                maximum: try container.decodeIfPresent(Int.self, forKey: .maximum))
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(value.minimum, forKey: .minimum)
            try container.encodeIfPresent(value.maximum, forKey: .maximum)
        }
    }

    init(value: WinBackOffer) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        value = WinBackOffer(
            identifier: try container.decode(String.self, forKey: .identifier),
            referenceName: try container.decode(String.self, forKey: .referenceName),
            schedule: try OfferScheduleCoding(from: decoder).value,
            paidSubscriptionDurationInMonths: try container.decode(Int.self, forKey: .paidSubscriptionDurationInMonths),
            timeSinceLastSubscribedInMonths: try container.decode(
                MonthRangeCoding.self, forKey: .timeSinceLastSubscribedInMonths
            ).value,
            waitBetweenOffersInMonths: try container.decodeIfPresent(Int.self, forKey: .waitBetweenOffersInMonths),
            startDate: try Self.date(in: container, forKey: .startDate),
            endDate: try Self.date(in: container, forKey: .endDate),
            priority: try CatalogFileCoding.decodeEnum(WinBackOffer.Priority.self, in: container, forKey: .priority))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(value.identifier, forKey: .identifier)
        try container.encode(value.referenceName, forKey: .referenceName)
        try OfferScheduleCoding(value: value.schedule).encode(to: encoder)
        try container.encode(value.paidSubscriptionDurationInMonths, forKey: .paidSubscriptionDurationInMonths)
        try container.encode(
            MonthRangeCoding(value: value.timeSinceLastSubscribedInMonths), forKey: .timeSinceLastSubscribedInMonths)
        try container.encodeIfPresent(value.waitBetweenOffersInMonths, forKey: .waitBetweenOffersInMonths)
        let formatter = ISO8601DateFormatter()
        try container.encodeIfPresent(value.startDate.map(formatter.string), forKey: .startDate)
        try container.encodeIfPresent(value.endDate.map(formatter.string), forKey: .endDate)
        try container.encode(value.priority.rawValue, forKey: .priority)
    }

    /// An optional ISO 8601 date-time (`2026-01-31T12:00:00Z`) within `Date.kioskRange`.
    private static func date(in container: KeyedDecodingContainer<Keys>, forKey key: Keys) throws -> Date? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = ISO8601DateFormatter().date(from: text), Date.kioskRange.contains(date) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "'\(text.prefix(40))' is not an ISO 8601 date-time such as 2026-01-31T12:00:00Z "
                    + "from \(Date.kioskRangeText)")
        }
        return date
    }
}
