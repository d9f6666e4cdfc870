import Foundation

extension StoreKitConfiguration {
    /// The catalog this configuration describes, in Kiosk's terms.
    ///
    /// Prices become `pricing.tier` when `PriceTable` has a tier with exactly that price in the file's storefront,
    /// else a custom price in that storefront. Locales are normalized to `en_US` style, groups are named by their
    /// `name`, subscription levels come from `groupNumber`, and `reviewState` is left nil for the importer to
    /// decide. Products are cleared for sale (the file has no such switch). Parts Kiosk does not model are listed
    /// by ``unsupportedContent``.
    ///
    /// - Parameters:
    ///   - bundleId: The bundle id of the app the catalog is for (the file does not name it).
    ///   - appName: The app's name.
    /// - Throws: `KioskError` `invalid_storekit_file` naming the path of a price that is not a valid amount in
    ///   the storefront's currency, an unknown `_storefront`, a promotional offer without `offerID`, or a product
    ///   id or group name used twice.
    public func catalogDocument(bundleId: String, appName: String) throws(KioskError) -> CatalogDocument {
        guard let storefront = Storefront.named(storefrontCode) else {
            throw Self.invalid(
                "'\(storefrontCode)' is not a storefront Kiosk knows.", field: "settings._storefront",
                fix: "Use an ISO 3166-1 alpha-3 code such as USA.")
        }
        let prices = PriceReader(storefront: storefront)
        var entries: [CatalogDocument.ProductEntry] = []
        for (index, product) in products.enumerated() {
            let type: ProductType = product.type == .consumable ? .consumable : .nonConsumable
            entries.append(try Self.entry(product, type: type, field: "products[\(index)]", prices: prices))
        }
        for (index, product) in nonRenewingSubscriptions.enumerated() {
            entries.append(
                try Self.entry(product, type: .nonRenewing, field: "nonRenewingSubscriptions[\(index)]", prices: prices)
            )
        }
        var groups: [CatalogDocument.GroupEntry] = []
        for (groupIndex, group) in subscriptionGroups.enumerated() {
            let field = "subscriptionGroups[\(groupIndex)]"
            guard !groups.contains(where: { $0.referenceName == group.name }) else {
                throw Self.invalid(
                    "Subscription group '\(group.name)' appears more than once.", field: "\(field).name",
                    fix: "Give each group a distinct name.")
            }
            groups.append(
                CatalogDocument.GroupEntry(
                    referenceName: group.name,
                    localizations: group.localizations.map {
                        SubscriptionGroupLocalization(
                            locale: Self.normalizedLocale($0.locale), name: $0.displayName,
                            customAppName: $0.customAppName)
                    }))
            for (index, subscription) in group.subscriptions.enumerated() {
                entries.append(
                    try Self.subscriptionEntry(
                        subscription, group: group.name, field: "\(field).subscriptions[\(index)]", prices: prices))
            }
        }
        var seen = Set<String>()
        for entry in entries where !seen.insert(entry.productId).inserted {
            throw Self.invalid(
                "Product '\(entry.productId)' appears more than once.", field: "productID",
                fix: "Keep one product per product id.")
        }
        return CatalogDocument(
            app: CatalogDocument.AppEntry(bundleId: bundleId, name: appName), subscriptionGroups: groups,
            products: entries)
    }

    /// What the file holds that Kiosk does not import, each as `path: what`; the importer shows these as
    /// warnings. Empty for files Kiosk represents completely.
    public var unsupportedContent: [String] {
        var notes: [String] = []
        for (groupIndex, group) in subscriptionGroups.enumerated() {
            let groupField = "subscriptionGroups[\(groupIndex)]"
            for (index, localization) in group.localizations.enumerated() where !localization.description.isEmpty {
                notes.append("\(groupField).localizations[\(index)].description: group descriptions are not kept")
            }
            for (index, subscription) in group.subscriptions.enumerated() {
                let field = "\(groupField).subscriptions[\(index)]"
                if !subscription.codeOffers.isEmpty {
                    notes.append("\(field).codeOffers: offer codes are not imported")
                }
                if !(subscription.winbackOffers ?? []).isEmpty {
                    notes.append("\(field).winbackOffers: win-back offers are not imported")
                }
                if (subscription.introductoryOffers ?? []).contains(where: { !Self.isUpFrontPlan($0) }) {
                    notes.append("\(field).introductoryOffers: offers of commitment billing plans are not imported")
                }
                if subscription.adHocOffers.contains(where: { !Self.isUpFrontPlan($0) }) {
                    notes.append("\(field).adHocOffers: offers of commitment billing plans are not imported")
                }
                if (subscription.billingPlans ?? []).contains(where: {
                    if case .object(let plan) = $0 {
                        plan["billingPlanType"] != .string(Self.upFrontPlan)
                    } else {
                        true
                    }
                }) {
                    notes.append("\(field).billingPlans: commitment billing plans are not imported")
                }
            }
        }
        return notes
    }

    /// Version 5's name of the ordinary plan, the one Kiosk models.
    private static let upFrontPlan = "BILLED_UPFRONT"

    private static func isUpFrontPlan(_ offer: Offer) -> Bool {
        offer.billingPlanType == nil || offer.billingPlanType == upFrontPlan
    }

    /// `en-US` → `en_US`; language-only locales (`ar`) stay as they are.
    static func normalizedLocale(_ locale: String) -> String {
        locale.replacingOccurrences(of: "-", with: "_")
    }

    static func invalid(_ message: String, field: String, fix: String) -> KioskError {
        KioskError.invalid(errorCode, message, field: field, fix: fix)
    }

    private static func entry(
        _ product: ProductEntry, type: ProductType, field: String, prices: PriceReader
    ) throws(KioskError) -> CatalogDocument.ProductEntry {
        CatalogDocument.ProductEntry(
            productId: product.productID, referenceName: product.referenceName, type: type,
            pricing: try prices.pricing(product.displayPrice, field: "\(field).displayPrice"),
            localizations: product.localizations.map {
                ProductLocalization(
                    locale: normalizedLocale($0.locale), displayName: $0.displayName, description: $0.description)
            },
            familyShareable: product.familyShareable)
    }

    private static func subscriptionEntry(
        _ product: ProductEntry, group: String, field: String, prices: PriceReader
    ) throws(KioskError) -> CatalogDocument.ProductEntry {
        var entry = try entry(product, type: .autoRenewable, field: field, prices: prices)
        entry.subscription = product.groupNumber.map {
            CatalogDocument.ProductEntry.Membership(group: group, level: $0)
        }
        entry.duration = product.recurringSubscriptionPeriod
        let introductory: [(Offer, String)] =
            if let offers = product.introductoryOffers {
                offers.enumerated().filter { isUpFrontPlan($0.element) }.map {
                    ($0.element, "\(field).introductoryOffers[\($0.offset)]")
                }
            } else {
                product.introductoryOffer.map { [($0, "\(field).introductoryOffer")] } ?? []
            }
        if let (offer, offerField) = introductory.first {
            entry.introductoryOffers = [
                IntroductoryOffer(
                    paymentMode: offer.paymentMode.offerPaymentMode, period: offer.subscriptionPeriod,
                    numberOfPeriods: offer.numberOfPeriods ?? 1,
                    pricing: try prices.offerPricing(offer, field: offerField))
            ]
        }
        var promotional: [PromotionalOffer] = []
        for (index, offer) in product.adHocOffers.enumerated() where isUpFrontPlan(offer) {
            let offerField = "\(field).adHocOffers[\(index)]"
            guard let identifier = offer.offerID, !identifier.isEmpty else {
                throw invalid(
                    "The promotional offer has no offer identifier.", field: "\(offerField).offerID",
                    fix: "Set the offer's identifier in Xcode.")
            }
            promotional.append(
                PromotionalOffer(
                    identifier: identifier, referenceName: offer.referenceName ?? identifier,
                    paymentMode: offer.paymentMode.offerPaymentMode, period: offer.subscriptionPeriod,
                    numberOfPeriods: offer.numberOfPeriods ?? 1,
                    pricing: try prices.offerPricing(offer, field: offerField)))
        }
        entry.promotionalOffers = promotional.sorted { $0.identifier < $1.identifier }
        return entry
    }

    /// Reads `displayPrice` strings in the file's storefront currency.
    private struct PriceReader {
        let storefront: Storefront

        func pricing(_ text: String, field: String) throws(KioskError) -> Pricing {
            let currency = storefront.currency
            guard let minorUnits = currency.minorUnits(decimalString: text) else {
                let example = currency.decimalString(minorUnits: currency.minorUnitExponent == 0 ? 120 : 99)
                throw StoreKitConfiguration.invalid(
                    "'\(text)' is not a price in \(currency.code) (\(storefront.code) storefront).", field: field,
                    fix: "Write a plain decimal with at most \(currency.minorUnitExponent) digits after the point, "
                        + "such as \"\(example)\".")
            }
            if let tier = PriceTable.tier(matching: minorUnits, in: storefront) { return Pricing(tier: tier) }
            return Pricing(customPrices: [storefront.code: minorUnits])
        }

        func offerPricing(_ offer: Offer, field: String) throws(KioskError) -> Pricing {
            guard offer.paymentMode != .free else { return Pricing() }
            guard let text = offer.displayPrice else {
                throw StoreKitConfiguration.invalid(
                    "A \(offer.paymentMode.rawValue) offer needs a price.", field: "\(field).displayPrice",
                    fix: "Set the offer's price.")
            }
            return try pricing(text, field: "\(field).displayPrice")
        }
    }
}
