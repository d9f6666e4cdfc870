import Foundation

// Writing the `.storekit` JSON shape: the keys real Xcode files carry (versions 1–5), and every key Kiosk did not
// know when it read the file, written back as read. Reading is in `StoreKitConfiguration+Reading.swift`.

extension StoreKitConfiguration: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case appPolicies, identifier, nonRenewingSubscriptions, products, settings, subscriptionGroups
        case subscriptionOffersKeyPair, version
    }

    /// Writes the configuration; absent optional parts stay absent.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
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

extension StoreKitConfiguration.Version: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case major, minor
    }

    /// Writes `{"major", "minor"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
    }
}

extension StoreKitConfiguration.Localization: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case description, displayName, locale
    }

    /// Writes `{"description", "displayName", "locale"}`.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(description, forKey: .description)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(locale, forKey: .locale)
    }
}

extension StoreKitConfiguration.GroupLocalization: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case customAppName, description, displayName, locale
    }

    /// Writes the group localization.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(customAppName, forKey: .customAppName)
        try container.encode(description, forKey: .description)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(locale, forKey: .locale)
    }
}

extension StoreKitConfiguration.Offer: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case billingPlanType, displayPrice, eligibility, internalID, isStackable, numberOfPeriods, offerID
        case paymentMode, referenceName, subscriptionPeriod
    }

    /// Writes the offer, leaving out absent keys.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
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

extension StoreKitConfiguration.WinBackEntry: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case isEligible, customerEligibilityPaidSubscriptionDurationInMonths
        case customerEligibilityTimeSinceLastSubscribedInMonths, customerEligibilityWaitBetweenOffersInMonths
        case startDate, endDate, priority
    }

    private enum RangeKeys: String, CodingKey {
        case minimum, maximum
    }

    /// Writes the offer's terms and the win-back keys that are set; priority in upper case, dates as ISO 8601
    /// date-times.
    public func encode(to encoder: any Encoder) throws {
        try offer.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(isEligible, forKey: .isEligible)
        try container.encodeIfPresent(
            paidSubscriptionDurationInMonths, forKey: .customerEligibilityPaidSubscriptionDurationInMonths)
        if let range = timeSinceLastSubscribedInMonths {
            var nested = container.nestedContainer(
                keyedBy: RangeKeys.self, forKey: .customerEligibilityTimeSinceLastSubscribedInMonths)
            try nested.encode(range.minimum, forKey: .minimum)
            try nested.encodeIfPresent(range.maximum, forKey: .maximum)
        }
        try container.encodeIfPresent(
            waitBetweenOffersInMonths, forKey: .customerEligibilityWaitBetweenOffersInMonths)
        let formatter = ISO8601DateFormatter()
        try container.encodeIfPresent(startDate.map(formatter.string), forKey: .startDate)
        try container.encodeIfPresent(endDate.map(formatter.string), forKey: .endDate)
        try container.encodeIfPresent(priority?.rawValue.uppercased(), forKey: .priority)
    }
}

extension StoreKitConfiguration.ProductEntry: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case displayPrice, familyShareable, internalID, localizations, productID, referenceName, type
        case adHocOffers, billingPlans, codeOffers, groupNumber, introductoryOffer, introductoryOffers
        case recurringSubscriptionPeriod, subscriptionGroupID, winbackOffers
    }

    /// Writes the product; subscriptions also get their subscription keys, with `introductoryOffer: null` when
    /// there is none, as Xcode writes it.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
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

extension StoreKitConfiguration.Group: Encodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case id, localizations, name, subscriptions
    }

    /// Writes the group.
    public func encode(to encoder: any Encoder) throws {
        try CatalogFileCoding.encode(extras, to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(localizations, forKey: .localizations)
        try container.encode(name, forKey: .name)
        try container.encode(subscriptions, forKey: .subscriptions)
    }
}
