import Foundation

extension StoreKitConfiguration {
    /// This export with everything `original` (the file last imported) held that the catalog does not model, so a
    /// file round-trips with nothing dropped: its version (written as read), identifier, settings, app policies and offer key pair,
    /// every key Kiosk did not know, Xcode's ids, offer codes and billing plans.
    ///
    /// Products and groups are matched by product id and group name; what the catalog models (prices, texts,
    /// levels, introductory, promotional and win-back offers) comes from the catalog. The original's `_storefront` and
    /// `_locale` give way to the export's when it is for another storefront.
    public func keeping(from original: StoreKitConfiguration) -> StoreKitConfiguration {
        var merged = self
        // A catalog that gained a monthly plan needs the format with billing plans.
        merged.version =
            version == Self.billingPlansVersion && original.version.major < version.major ? version : original.version
        if !original.identifier.isEmpty { merged.identifier = original.identifier }
        var settings = original.settings
        for key in ["_storefront", "_locale"] where original.storefrontCode != storefrontCode {
            settings[key] = self.settings[key]
        }
        merged.settings = settings.isEmpty ? self.settings : settings
        merged.appPolicies = original.appPolicies ?? appPolicies
        merged.subscriptionOffersKeyPair = original.subscriptionOffersKeyPair
        merged.extras = original.extras
        let originals = Dictionary(
            original.allProducts.map { ($0.productID, $0) }, uniquingKeysWith: { first, _ in first })
        let keep = { (entry: ProductEntry) in originals[entry.productID].map { entry.keeping(from: $0) } ?? entry }
        merged.products = products.map(keep)
        merged.nonRenewingSubscriptions = nonRenewingSubscriptions.map(keep)
        merged.subscriptionGroups = subscriptionGroups.map { group in
            var kept = group
            guard let source = original.subscriptionGroups.first(where: { $0.name == group.name }) else {
                kept.subscriptions = group.subscriptions.map(keep)
                return kept
            }
            if !source.id.isEmpty { kept.id = source.id }
            kept.extras = source.extras
            kept.localizations = group.localizations.map { localization in
                var localization = localization
                if let match = source.localizations.first(where: {
                    StoreKitConfiguration.catalogLocale($0.locale) == localization.locale
                }) {
                    localization.description = match.description
                    localization.extras = match.extras
                }
                return localization
            }
            kept.subscriptions = group.subscriptions.map { subscription in
                var subscription = keep(subscription)
                subscription.subscriptionGroupID = kept.id
                return subscription
            }
            return kept
        }
        return merged
    }

    /// What ``keeping(from:)`` needs of this file, for the store to keep in place of the whole upload: the file
    /// without what the catalog holds of each product (its reference name, price, and localized names and
    /// descriptions).
    public var unmodeledParts: StoreKitConfiguration {
        func strip(_ entry: ProductEntry) -> ProductEntry {
            var entry = entry
            entry.referenceName = ""
            entry.displayPrice = ""
            entry.localizations = entry.localizations.map { localization in
                var localization = localization
                localization.displayName = ""
                localization.description = ""
                return localization
            }
            return entry
        }
        var parts = self
        parts.products = products.map(strip)
        parts.nonRenewingSubscriptions = nonRenewingSubscriptions.map(strip)
        parts.subscriptionGroups = subscriptionGroups.map { group in
            var group = group
            group.subscriptions = group.subscriptions.map(strip)
            return group
        }
        return parts
    }

    /// Every product of the file, whatever list it is in.
    var allProducts: [ProductEntry] {
        products + nonRenewingSubscriptions + subscriptionGroups.flatMap(\.subscriptions)
    }
}

extension StoreKitConfiguration.ProductEntry {
    /// This entry with what `original` held that the catalog does not model.
    func keeping(from original: Self) -> Self {
        var kept = self
        if !original.internalID.isEmpty { kept.internalID = original.internalID }
        kept.extras = original.extras
        kept.localizations = localizations.map { localization in
            var localization = localization
            localization.extras =
                original.localizations.first { StoreKitConfiguration.catalogLocale($0.locale) == localization.locale }?
                .extras ?? [:]
            return localization
        }
        guard type == .recurringSubscription else { return kept }
        kept.codeOffers = original.codeOffers
        if let originals = original.winbackOffers {
            kept.winbackOffers = (winbackOffers ?? []).map { entry in
                originals.first { $0.offer.offerID == entry.offer.offerID }.map { entry.keeping(from: $0) } ?? entry
            }
        } else if winbackOffers?.isEmpty ?? true {
            kept.winbackOffers = nil  // An older file without the key stays without it.
        }
        kept.billingPlans = Self.billingPlans(
            billingPlans, keeping: original.billingPlans,
            modelsMonthlyPlan: recurringSubscriptionPeriod == MonthlyPlan.commitmentDuration)
        let upFront = StoreKitConfiguration.isUpFrontPlan
        kept.adHocOffers =
            adHocOffers.map { offer in
                guard let source = original.adHocOffers.first(where: { $0.offerID == offer.offerID }) else {
                    return offer
                }
                return offer.keeping(from: source)
            } + original.adHocOffers.filter { !upFront($0) }
        if let offers = original.introductoryOffers {
            // Version 5: introductory offers per billing plan; the catalog's is the billed-up-front plan's.
            let source = offers.first(where: upFront)
            let catalogs = introductoryOffer.map { offer in
                var offer = source.map { offer.keeping(from: $0) } ?? offer
                offer.billingPlanType = source?.billingPlanType
                return offer
            }
            kept.introductoryOffers = (catalogs.map { [$0] } ?? []) + offers.filter { !upFront($0) }
            // Xcode may write the up-front plan's offer as `introductoryOffer` too.
            kept.introductoryOffer = original.introductoryOffer.flatMap { source in
                introductoryOffer.map { $0.keeping(from: source) }
            }
        } else if let offer = introductoryOffer, let source = original.introductoryOffer {
            kept.introductoryOffer = offer.keeping(from: source)
        }
        return kept
    }
}

extension StoreKitConfiguration.ProductEntry {
    /// The export's billing plans (`exported`, nil when the product has no monthly plan) with what the original's
    /// held: each plan the catalog models keeps the original entry's ids and unknown keys under the catalog's prices;
    /// a monthly plan the catalog dropped is dropped where the catalog `modelsMonthlyPlan` (a one-year subscription;
    /// elsewhere the file's plan was kept, not imported); plans of other types stay as read.
    static func billingPlans(_ exported: [JSONValue]?, keeping original: [JSONValue]?, modelsMonthlyPlan: Bool)
        -> [JSONValue]?
    {
        guard let original else { return exported }
        func type(_ plan: JSONValue) -> JSONValue? {
            if case .object(let object) = plan { object["billingPlanType"] } else { nil }
        }
        let monthly = JSONValue.string(StoreKitConfiguration.monthlyPlan)
        var merged: [JSONValue] = []
        for plan in original {
            if let update = exported?.first(where: { type($0) == type(plan) }),
                case .object(var object) = plan, case .object(let prices) = update
            {
                for key in ["displayPrice", "commitmentDisplayPrice"] { object[key] = prices[key] }
                merged.append(.object(object))
            } else if type(plan) != monthly || exported != nil || !modelsMonthlyPlan {
                merged.append(plan)
            }
        }
        for plan in exported ?? [] where !original.contains(where: { type($0) == type(plan) }) {
            merged.append(plan)
        }
        return merged
    }
}

extension StoreKitConfiguration.Offer {
    /// This offer with `original`'s id, billing plan, the keys Kiosk did not know, and its way of writing one
    /// period (`numberOfPeriods: 1` or no key).
    func keeping(from original: Self) -> Self {
        var kept = self
        if !original.internalID.isEmpty { kept.internalID = original.internalID }
        kept.extras = original.extras
        kept.billingPlanType = original.billingPlanType ?? billingPlanType
        if (original.numberOfPeriods ?? 1) == (numberOfPeriods ?? 1) { kept.numberOfPeriods = original.numberOfPeriods }
        kept.eligibility = original.eligibility ?? eligibility
        kept.isStackable = original.isStackable ?? isStackable
        return kept
    }
}

extension StoreKitConfiguration.WinBackEntry {
    /// This win-back offer with what `original` held that the catalog does not model (as
    /// ``StoreKitConfiguration/Offer/keeping(from:)``, and Xcode's `isEligible`), and without the eligibility keys
    /// `original` did not have whose values are the ones its import defaulted to.
    func keeping(from original: Self) -> Self {
        var kept = self
        kept.offer = offer.keeping(from: original.offer)
        kept.isEligible = original.isEligible
        if original.paidSubscriptionDurationInMonths == nil, paidSubscriptionDurationInMonths == 1 {
            kept.paidSubscriptionDurationInMonths = nil
        }
        if original.timeSinceLastSubscribedInMonths == nil,
            timeSinceLastSubscribedInMonths == WinBackOffer.MonthRange(minimum: 1)
        {
            kept.timeSinceLastSubscribedInMonths = nil
        }
        if original.priority == nil, priority == .normal { kept.priority = nil }
        return kept
    }
}
