import Foundation

/// An in-app purchase product of one app. Its `productId` is permanent: once used, even after the
/// product is deleted, it can never be used again in that app.
public struct Product: Codable, Sendable, Hashable {
    public var appId: App.ID
    public var productId: String
    public var referenceName: String
    public var type: ProductType
    public var pricing: Pricing
    public var localizations: [ProductLocalization]
    public var clearedForSale: Bool
    public var reviewState: ReviewState
    public var familyShareable: Bool
    /// Auto-renewable products belong to a subscription group at a level (1 = highest service).
    public var subscription: SubscriptionMembership?
    /// The period of an auto-renewable subscription (required) or a non-renewing one (optional).
    public var duration: SubscriptionDuration?
    public var introductoryOffers: [IntroductoryOffer]
    public var promotionalOffers: [PromotionalOffer]
    public var winBackOffers: [WinBackOffer]
    /// A one-year auto-renewable's monthly plan with a 12-month commitment, beside the up-front price; nil when it
    /// bills up front only.
    public var monthlyPlan: MonthlyPlan?
    /// The territories the product is offered in; nil for every territory where it has a price.
    public var territoryAvailability: TerritoryAvailability?
    public var createdAt: Date
    public var updatedAt: Date
    /// Set when the developer deleted the product; the row stays so the id is never reused.
    public var deletedAt: Date?

    public init(
        appId: App.ID, productId: String, referenceName: String, type: ProductType, pricing: Pricing = Pricing(),
        localizations: [ProductLocalization] = [], clearedForSale: Bool = true,
        reviewState: ReviewState = .missingMetadata, familyShareable: Bool = false,
        subscription: SubscriptionMembership? = nil, duration: SubscriptionDuration? = nil,
        introductoryOffers: [IntroductoryOffer] = [], promotionalOffers: [PromotionalOffer] = [],
        winBackOffers: [WinBackOffer] = [], monthlyPlan: MonthlyPlan? = nil,
        territoryAvailability: TerritoryAvailability? = nil, createdAt: Date, updatedAt: Date, deletedAt: Date? = nil
    ) {
        self.appId = appId
        self.productId = productId
        self.referenceName = referenceName
        self.type = type
        self.pricing = pricing
        self.localizations = localizations
        self.clearedForSale = clearedForSale
        self.reviewState = reviewState
        self.familyShareable = familyShareable
        self.subscription = subscription
        self.duration = duration
        self.introductoryOffers = introductoryOffers
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.monthlyPlan = monthlyPlan
        self.territoryAvailability = territoryAvailability
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
    }
}

/// A price: a tier of the built-in table (1–20), and/or custom price points per storefront, which win
/// over the tier in their storefront. Amounts are integer minor units of the storefront's currency.
public struct Pricing: Codable, Sendable, Hashable {
    public var tier: Int?
    /// Storefront alpha-3 code → price in minor units.
    public var customPrices: [String: Int]

    /// The largest custom price, in minor units: 10¹², so prices in Apple's milliunits, times a quantity or a
    /// refund share, stay far inside Int64.
    public static let maximumMinorUnits = 1_000_000_000_000

    public init(tier: Int? = nil, customPrices: [String: Int] = [:]) {
        self.tier = tier
        self.customPrices = customPrices
    }

    public var isEmpty: Bool { tier == nil && customPrices.isEmpty }

    private enum CodingKeys: String, CodingKey { case tier, customPrices }

    /// Both fields are optional on the wire: `{"tier": 1}` is a whole pricing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tier = try container.decodeIfPresent(Int.self, forKey: .tier)
        customPrices = try container.decodeIfPresent([String: Int].self, forKey: .customPrices) ?? [:]
    }
}

/// A product's name and description in one locale (`en_US`, `zh_CN`, …).
public struct ProductLocalization: Codable, Sendable, Hashable {
    public var locale: String
    public var displayName: String
    public var description: String

    public init(locale: String, displayName: String, description: String) {
        self.locale = locale
        self.displayName = displayName
        self.description = description
    }
}

/// An auto-renewable product's place in its subscription group.
public struct SubscriptionMembership: Codable, Sendable, Hashable {
    public var groupId: SubscriptionGroup.ID
    /// 1 is the highest level of service; moving to a lower number is an upgrade.
    public var level: Int

    public init(groupId: SubscriptionGroup.ID, level: Int) {
        self.groupId = groupId
        self.level = level
    }
}

/// An introductory offer of an auto-renewable product, for one storefront or (nil) all of them.
public struct IntroductoryOffer: ScheduledOffer, Codable, Sendable, Hashable {
    /// The alpha-3 code of the storefront the offer is for, upper case as the storefront table spells it (a
    /// known code given in another case is stored as the table has it); nil for every storefront.
    public var storefront: String?
    public var schedule: OfferSchedule

    public init(storefront: String? = nil, schedule: OfferSchedule) {
        self.storefront = storefront.map(Self.canonicalStorefront)
        self.schedule = schedule
    }

    private enum CodingKeys: String, CodingKey { case storefront }

    /// `usa` → `USA`: purchases compare codes exactly. An unknown code stays as given (validation refuses it).
    private static func canonicalStorefront(_ code: String) -> String {
        Storefront.named(code)?.code ?? code
    }

    /// The storefront and the schedule's fields, side by side.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storefront = try container.decodeIfPresent(String.self, forKey: .storefront).map(Self.canonicalStorefront)
        schedule = try OfferSchedule(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(storefront, forKey: .storefront)
        try schedule.encode(to: encoder)
    }
}

/// A promotional offer of an auto-renewable product, redeemed with a signature the merchant makes.
public struct PromotionalOffer: ScheduledOffer, Codable, Sendable, Hashable {
    /// Unique within the product; what apps pass as the offer identifier.
    public var identifier: String
    public var referenceName: String
    public var schedule: OfferSchedule

    public init(identifier: String, referenceName: String, schedule: OfferSchedule) {
        self.identifier = identifier
        self.referenceName = referenceName
        self.schedule = schedule
    }

    private enum CodingKeys: String, CodingKey { case identifier, referenceName }

    /// The identifier, the reference name and the schedule's fields, side by side.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        referenceName = try container.decode(String.self, forKey: .referenceName)
        schedule = try OfferSchedule(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(referenceName, forKey: .referenceName)
        try schedule.encode(to: encoder)
    }
}
