import Foundation

// The `.storekit` JSON shape. Keys are the ones real Xcode files carry (versions 1–5); any other key is an error
// with its path, so nothing in a file is dropped without the user hearing of it.

extension StoreKitConfiguration: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case appPolicies, identifier, nonRenewingSubscriptions, products, settings, subscriptionGroups
        case subscriptionOffersKeyPair, version
    }

    /// Reads a configuration and checks that each product sits in the list its type belongs to.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        let version = try container.decode(Version.self, forKey: .version)
        let products = try container.decode([ProductEntry].self, forKey: .products)
        try Self.require(products, in: [.consumable, .nonConsumable], list: "products", decoder: decoder)
        let nonRenewing = try container.decode([ProductEntry].self, forKey: .nonRenewingSubscriptions)
        try Self.require(
            nonRenewing, in: [.nonRenewingSubscription], list: "nonRenewingSubscriptions", decoder: decoder)
        self.init(
            identifier: try container.decode(String.self, forKey: .identifier),
            products: products,
            nonRenewingSubscriptions: nonRenewing,
            subscriptionGroups: try container.decode([Group].self, forKey: .subscriptionGroups),
            settings: try container.decodeIfPresent([String: JSONValue].self, forKey: .settings) ?? [:],
            appPolicies: try container.decodeIfPresent(JSONValue.self, forKey: .appPolicies),
            subscriptionOffersKeyPair: try container.decodeIfPresent(
                JSONValue.self, forKey: .subscriptionOffersKeyPair),
            version: version)
    }

    private static func require(
        _ entries: [ProductEntry], in kinds: Set<ProductKind>, list: String, decoder: any Decoder
    ) throws {
        for (index, entry) in entries.enumerated() where !kinds.contains(entry.type) {
            let allowed = kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: " or ")
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [
                        CatalogFileCoding.AnyKey(stringValue: list), CatalogFileCoding.AnyKey(intValue: index),
                        CatalogFileCoding.AnyKey(stringValue: "type"),
                    ],
                    debugDescription: "a '\(entry.type.rawValue)' product cannot be in '\(list)' (expected \(allowed))")
            )
        }
    }

    /// Writes the configuration; absent optional parts stay absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(appPolicies, forKey: .appPolicies)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(nonRenewingSubscriptions, forKey: .nonRenewingSubscriptions)
        try container.encode(products, forKey: .products)
        try container.encode(settings, forKey: .settings)
        try container.encode(subscriptionGroups, forKey: .subscriptionGroups)
        try container.encodeIfPresent(subscriptionOffersKeyPair, forKey: .subscriptionOffersKeyPair)
        try container.encode(version, forKey: .version)
    }
}

extension StoreKitConfiguration.Version: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case major, minor
    }

    /// Reads `{"major", "minor"}`; major versions 1 to 5 are known.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        let major = try container.decode(Int.self, forKey: .major)
        guard (1...5).contains(major) else {
            throw DecodingError.dataCorruptedError(
                forKey: .major, in: container,
                debugDescription: "format version \(major) is not supported (Kiosk reads versions 1 to 5)")
        }
        self.init(major: major, minor: try container.decode(Int.self, forKey: .minor))
    }

    /// Writes `{"major", "minor"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
    }
}

extension StoreKitConfiguration.Localization: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case description, displayName, locale
    }

    /// Reads `{"description", "displayName", "locale"}`.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            locale: try container.decode(String.self, forKey: .locale),
            displayName: try container.decode(String.self, forKey: .displayName),
            description: try container.decode(String.self, forKey: .description))
    }

    /// Writes `{"description", "displayName", "locale"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(description, forKey: .description)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(locale, forKey: .locale)
    }
}

extension StoreKitConfiguration.GroupLocalization: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case customAppName, description, displayName, locale
    }

    /// Reads `{"customAppName"?, "description"?, "displayName", "locale"}`.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            locale: try container.decode(String.self, forKey: .locale),
            displayName: try container.decode(String.self, forKey: .displayName),
            description: try container.decodeIfPresent(String.self, forKey: .description) ?? "",
            customAppName: try container.decodeIfPresent(String.self, forKey: .customAppName))
    }

    /// Writes the group localization.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(customAppName, forKey: .customAppName)
        try container.encode(description, forKey: .description)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(locale, forKey: .locale)
    }
}

extension StoreKitConfiguration.Offer: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case billingPlanType, displayPrice, eligibility, internalID, isStackable, numberOfPeriods, offerID
        case paymentMode, referenceName, subscriptionPeriod
    }

    /// Reads an offer; `paymentMode` must be `free`, `payAsYouGo` or `payUpFront`.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            internalID: try container.decode(String.self, forKey: .internalID),
            offerID: try container.decodeIfPresent(String.self, forKey: .offerID),
            referenceName: try container.decodeIfPresent(String.self, forKey: .referenceName),
            paymentMode: try CatalogFileCoding.decodeEnum(
                StoreKitConfiguration.PaymentMode.self, in: container, forKey: .paymentMode),
            subscriptionPeriod: try container.decode(OfferPeriod.self, forKey: .subscriptionPeriod),
            numberOfPeriods: try container.decodeIfPresent(Int.self, forKey: .numberOfPeriods),
            displayPrice: try container.decodeIfPresent(String.self, forKey: .displayPrice),
            billingPlanType: try container.decodeIfPresent(String.self, forKey: .billingPlanType),
            eligibility: try container.decodeIfPresent([String].self, forKey: .eligibility),
            isStackable: try container.decodeIfPresent(Bool.self, forKey: .isStackable))
    }

    /// Writes the offer, leaving out absent keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(billingPlanType, forKey: .billingPlanType)
        try container.encodeIfPresent(displayPrice, forKey: .displayPrice)
        try container.encodeIfPresent(eligibility, forKey: .eligibility)
        try container.encode(internalID, forKey: .internalID)
        try container.encodeIfPresent(isStackable, forKey: .isStackable)
        try container.encodeIfPresent(numberOfPeriods, forKey: .numberOfPeriods)
        try container.encodeIfPresent(offerID, forKey: .offerID)
        try container.encode(paymentMode.rawValue, forKey: .paymentMode)
        try container.encodeIfPresent(referenceName, forKey: .referenceName)
        try container.encode(subscriptionPeriod, forKey: .subscriptionPeriod)
    }
}

extension StoreKitConfiguration.ProductEntry: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case displayPrice, familyShareable, internalID, localizations, productID, referenceName, type
        case adHocOffers, billingPlans, codeOffers, groupNumber, introductoryOffer, introductoryOffers
        case recurringSubscriptionPeriod, subscriptionGroupID, winbackOffers
    }

    private static let productKeys: Set<Keys> = [
        .displayPrice, .familyShareable, .internalID, .localizations, .productID, .referenceName, .type,
    ]

    /// Reads a product; a `RecurringSubscription` must have `recurringSubscriptionPeriod` and `groupNumber`,
    /// other types must not carry subscription keys.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let type = try CatalogFileCoding.decodeEnum(
            StoreKitConfiguration.ProductKind.self, in: container, forKey: .type)
        let isSubscription = type == .recurringSubscription
        let known = isSubscription ? Set(Keys.allCases) : Self.productKeys
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(known.map(\.rawValue)))
        self.init(
            displayPrice: try container.decode(String.self, forKey: .displayPrice),
            familyShareable: try container.decode(Bool.self, forKey: .familyShareable),
            internalID: try container.decode(String.self, forKey: .internalID),
            localizations: try container.decode([StoreKitConfiguration.Localization].self, forKey: .localizations),
            productID: try container.decode(String.self, forKey: .productID),
            referenceName: try container.decode(String.self, forKey: .referenceName),
            type: type)
        guard isSubscription else { return }
        let period = try container.decode(String.self, forKey: .recurringSubscriptionPeriod)
        guard let duration = SubscriptionDuration(rawValue: period) else {
            let allowed = SubscriptionDuration.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                forKey: .recurringSubscriptionPeriod, in: container,
                debugDescription: "'\(period)' is not a renewal period (expected one of \(allowed))")
        }
        recurringSubscriptionPeriod = duration
        groupNumber = try container.decode(Int.self, forKey: .groupNumber)
        subscriptionGroupID = try container.decodeIfPresent(String.self, forKey: .subscriptionGroupID)
        introductoryOffer = try container.decodeIfPresent(StoreKitConfiguration.Offer.self, forKey: .introductoryOffer)
        introductoryOffers = try container.decodeIfPresent(
            [StoreKitConfiguration.Offer].self, forKey: .introductoryOffers)
        adHocOffers = try container.decodeIfPresent([StoreKitConfiguration.Offer].self, forKey: .adHocOffers) ?? []
        codeOffers = try container.decodeIfPresent([StoreKitConfiguration.Offer].self, forKey: .codeOffers) ?? []
        winbackOffers = try container.decodeIfPresent([JSONValue].self, forKey: .winbackOffers)
        billingPlans = try container.decodeIfPresent([JSONValue].self, forKey: .billingPlans)
    }

    /// Writes the product; subscriptions also get their subscription keys, with `introductoryOffer: null` when
    /// there is none, as Xcode writes it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(displayPrice, forKey: .displayPrice)
        try container.encode(familyShareable, forKey: .familyShareable)
        try container.encode(internalID, forKey: .internalID)
        try container.encode(localizations, forKey: .localizations)
        try container.encode(productID, forKey: .productID)
        try container.encode(referenceName, forKey: .referenceName)
        try container.encode(type.rawValue, forKey: .type)
        guard type == .recurringSubscription else { return }
        try container.encode(adHocOffers, forKey: .adHocOffers)
        try container.encodeIfPresent(billingPlans, forKey: .billingPlans)
        try container.encode(codeOffers, forKey: .codeOffers)
        try container.encodeIfPresent(groupNumber, forKey: .groupNumber)
        if let introductoryOffer {
            try container.encode(introductoryOffer, forKey: .introductoryOffer)
        } else {
            try container.encodeNil(forKey: .introductoryOffer)
        }
        try container.encodeIfPresent(introductoryOffers, forKey: .introductoryOffers)
        try container.encodeIfPresent(recurringSubscriptionPeriod?.rawValue, forKey: .recurringSubscriptionPeriod)
        try container.encodeIfPresent(subscriptionGroupID, forKey: .subscriptionGroupID)
        try container.encodeIfPresent(winbackOffers, forKey: .winbackOffers)
    }
}

extension StoreKitConfiguration.Group: Codable {
    private enum Keys: String, CodingKey, CaseIterable {
        case id, localizations, name, subscriptions
    }

    /// Reads a group; every entry of `subscriptions` must be a `RecurringSubscription`.
    public init(from decoder: any Decoder) throws {
        try CatalogFileCoding.rejectUnknownKeys(in: decoder, known: Set(Keys.allCases.map(\.rawValue)))
        let container = try decoder.container(keyedBy: Keys.self)
        let subscriptions = try container.decode([StoreKitConfiguration.ProductEntry].self, forKey: .subscriptions)
        for (index, entry) in subscriptions.enumerated() where entry.type != .recurringSubscription {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [
                        Keys.subscriptions, CatalogFileCoding.AnyKey(intValue: index),
                        CatalogFileCoding.AnyKey(stringValue: "type"),
                    ],
                    debugDescription: "a '\(entry.type.rawValue)' product cannot be in a subscription group "
                        + "(expected 'RecurringSubscription')"))
        }
        self.init(
            id: try container.decode(String.self, forKey: .id),
            localizations: try container.decode(
                [StoreKitConfiguration.GroupLocalization].self, forKey: .localizations),
            name: try container.decode(String.self, forKey: .name),
            subscriptions: subscriptions)
    }

    /// Writes the group.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(localizations, forKey: .localizations)
        try container.encode(name, forKey: .name)
        try container.encode(subscriptions, forKey: .subscriptions)
    }
}
