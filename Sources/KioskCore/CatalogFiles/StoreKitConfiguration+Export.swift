import Foundation

extension StoreKitConfiguration {
    /// A configuration Xcode accepts (format 4.0, or 5.0 with billing plans when a product has a monthly plan) for a
    /// catalog, with prices in one storefront.
    ///
    /// Ids are derived from the bundle id, group names and product ids, so exporting the same catalog twice gives
    /// identical bytes. Per product, the introductory offer for `storefront` is written, else the one for all
    /// storefronts; the file has room for one. Non-renewing durations, `clearedForSale` and review states have no
    /// place in the file and are not written.
    ///
    /// - Parameters:
    ///   - document: The catalog.
    ///   - storefront: The storefront whose prices and currency the file uses (`settings._storefront`).
    /// - Throws: `KioskError` `storekit_export_failed` when a product has no price in `storefront`, or an
    ///   auto-renewable product lacks its group or duration.
    public init(document: CatalogDocument, storefront: Storefront) throws(KioskError) {
        var ids = StableIdentifiers()
        let identifier = ids.make("configuration:\(document.app.bundleId)")
        var products: [ProductEntry] = []
        var nonRenewing: [ProductEntry] = []
        var subscriptions: [String: [(level: Int, entry: ProductEntry)]] = [:]
        for (index, product) in document.products.enumerated() {
            let field = "products[\(index)]"
            var entry = ProductEntry(
                displayPrice: try Self.displayPrice(
                    product.pricing, in: storefront, of: product.productId, field: "\(field).pricing"),
                familyShareable: product.familyShareable, internalID: ids.make("product:\(product.productId)"),
                localizations: product.localizations.map {
                    Localization(locale: $0.locale, displayName: $0.displayName, description: $0.description)
                },
                productID: product.productId, referenceName: product.referenceName, type: .consumable)
            switch product.type {
            case .consumable: products.append(entry)
            case .nonConsumable:
                entry.type = .nonConsumable
                products.append(entry)
            case .nonRenewing:
                entry.type = .nonRenewingSubscription
                nonRenewing.append(entry)
            case .autoRenewable:
                guard let membership = product.subscription, let duration = product.duration else {
                    throw Self.exportError(
                        "Auto-renewable product '\(product.productId)' needs a subscription group and a duration.",
                        field: field)
                }
                guard document.group(named: membership.group) != nil else {
                    throw Self.exportError(
                        "Product '\(product.productId)' names group '\(membership.group)', "
                            + "which is not in the catalog.",
                        field: "\(field).subscription.group")
                }
                entry.type = .recurringSubscription
                entry.recurringSubscriptionPeriod = duration
                entry.groupNumber = membership.level
                entry.introductoryOffer = try Self.introductoryOffer(
                    product, storefront: storefront, ids: &ids, field: field)
                entry.adHocOffers = try product.promotionalOffers.enumerated().map {
                    (offerIndex, offer) throws(KioskError) in
                    try Self.identifiedOffer(
                        kind: "promotional", of: product.productId, identifier: offer.identifier,
                        referenceName: offer.referenceName, mode: offer.paymentMode, period: offer.period,
                        numberOfPeriods: offer.numberOfPeriods, pricing: offer.pricing, storefront: storefront,
                        ids: &ids, field: "\(field).promotionalOffers[\(offerIndex)].pricing")
                }
                entry.winbackOffers = try product.winBackOffers.enumerated().map {
                    (offerIndex, offer) throws(KioskError) in
                    WinBackEntry(
                        offer: try Self.identifiedOffer(
                            kind: "win-back", of: product.productId, identifier: offer.identifier,
                            referenceName: offer.referenceName, mode: offer.paymentMode, period: offer.period,
                            numberOfPeriods: offer.numberOfPeriods, pricing: offer.pricing, storefront: storefront,
                            ids: &ids, field: "\(field).winBackOffers[\(offerIndex)].pricing"),
                        paidSubscriptionDurationInMonths: offer.paidSubscriptionDurationInMonths,
                        timeSinceLastSubscribedInMonths: offer.timeSinceLastSubscribedInMonths,
                        waitBetweenOffersInMonths: offer.waitBetweenOffersInMonths, startDate: offer.startDate,
                        endDate: offer.endDate, priority: offer.priority)
                }
                if let plan = product.monthlyPlan {
                    try Self.addBillingPlans(
                        plan, to: &entry, of: product.productId, storefront: storefront, ids: &ids, field: field)
                }
                subscriptions[membership.group, default: []].append((membership.level, entry))
            }
        }
        let hasBillingPlans = subscriptions.values.contains { $0.contains { $0.entry.billingPlans != nil } }
        var groups: [Group] = []
        for group in document.subscriptionGroups {
            let id = ids.make("group:\(group.referenceName)")
            let members = (subscriptions[group.referenceName] ?? [])
                .sorted { ($0.level, $0.entry.productID) < ($1.level, $1.entry.productID) }
                .map { member in
                    var entry = member.entry
                    entry.subscriptionGroupID = id
                    return entry
                }
            groups.append(
                Group(
                    id: id,
                    localizations: group.localizations.map {
                        GroupLocalization(locale: $0.locale, displayName: $0.name, customAppName: $0.customAppName)
                    },
                    name: group.referenceName, subscriptions: members))
        }
        self.init(
            identifier: identifier, products: products, nonRenewingSubscriptions: nonRenewing,
            subscriptionGroups: groups,
            settings: [
                "_failTransactionsEnabled": .bool(false),
                "_locale": .string(storefront.defaultLocale),
                "_storefront": .string(storefront.code),
                "_storeKitErrors": .array([]),
            ],
            appPolicies: .object([
                "eula": .string(""),
                "policies": .array([
                    .object([
                        "locale": .string(storefront.defaultLocale), "policyText": .string(""),
                        "policyURL": .string(""),
                    ])
                ]),
            ]),
            version: hasBillingPlans ? Self.billingPlansVersion : Self.writtenVersion)
    }

    /// The format version that has billing plans (Xcode 26.5): written when a product has a monthly plan.
    public static let billingPlansVersion = Version(major: 5, minor: 0)

    /// Version 5's billing plans of a one-year subscription with a monthly plan, as Xcode writes them: the up-front
    /// plan at the product's price and the monthly plan at its monthly price, each with its commitment's total
    /// (`commitmentDisplayPrice`: the year's price up front, 12 monthly payments); offers name the up-front plan.
    private static func addBillingPlans(
        _ plan: MonthlyPlan, to entry: inout ProductEntry, of productId: String, storefront: Storefront,
        ids: inout StableIdentifiers, field: String
    ) throws(KioskError) {
        let monthly = try displayPrice(
            plan.pricing, in: storefront, of: productId, field: "\(field).monthlyPlan.pricing")
        let total = storefront.currency.decimalString(
            minorUnits: (storefront.currency.minorUnits(decimalString: monthly) ?? 0) * MonthlyPlan.billingPeriods)
        func billingPlan(_ type: BillingPlanType, price: String, commitment: String, id: String) -> JSONValue {
            .object([
                "billingPlanType": .string(type.rawValue), "commitmentDisplayPrice": .string(commitment),
                "displayPrice": .string(price), "internalID": .string(id), "isEnabled": .bool(true),
            ])
        }
        entry.billingPlans = [
            billingPlan(
                .billedUpFront, price: entry.displayPrice, commitment: entry.displayPrice,
                id: ids.make("plan:\(productId):\(BillingPlanType.billedUpFront.rawValue)")),
            billingPlan(
                .monthly, price: monthly, commitment: total,
                id: ids.make("plan:\(productId):\(BillingPlanType.monthly.rawValue)")),
        ]
        entry.introductoryOffers =
            entry.introductoryOffer.map { offer in
                var offer = offer
                offer.billingPlanType = upFrontPlan
                return [offer]
            } ?? []
        entry.adHocOffers = entry.adHocOffers.map { offer in
            var offer = offer
            offer.billingPlanType = upFrontPlan
            return offer
        }
    }

    /// A configuration for a catalog with prices in `storefront`, or when nil in the storefront every product has
    /// a price in: the United States when they all have one there, as Xcode defaults to, else the first storefront
    /// (of the first product's prices) where they all have one.
    ///
    /// - Throws: As ``init(document:storefront:)``; when no storefront prices every product, the error names one
    ///   that lacks a price and asks for `storefront`.
    public init(document: CatalogDocument, storefront: Storefront? = nil) throws(KioskError) {
        if let storefront {
            try self.init(document: document, storefront: storefront)
            return
        }
        let priced = { (candidate: Storefront) in
            document.products.allSatisfy { $0.pricing.price(in: candidate) != nil }
        }
        let usa = Storefront.named("USA")
        let firstPrices = document.products.first?.pricing.customPrices.keys.sorted() ?? []
        let candidates = [usa].compactMap { $0 } + firstPrices.compactMap(Storefront.named)
        guard let chosen = candidates.first(where: priced) ?? usa else {
            throw Self.exportError("The USA storefront is missing from the storefront table.", field: "storefront")
        }
        try self.init(document: document, storefront: chosen)
    }

    private static func introductoryOffer(
        _ product: CatalogDocument.ProductEntry, storefront: Storefront, ids: inout StableIdentifiers, field: String
    ) throws(KioskError) -> Offer? {
        let offers = product.introductoryOffers.enumerated()
        guard
            let (index, offer) = offers.first(where: { $0.element.storefront == storefront.code })
                ?? offers.first(where: { $0.element.storefront == nil })
        else { return nil }
        return Offer(
            internalID: ids.make("introductory:\(product.productId)"), paymentMode: PaymentMode(offer.paymentMode),
            subscriptionPeriod: offer.period, numberOfPeriods: writtenPeriods(offer.paymentMode, offer.numberOfPeriods),
            displayPrice: try offerPrice(
                offer.paymentMode, offer.pricing, in: storefront, of: product.productId,
                field: "\(field).introductoryOffers[\(index)].pricing"
            ))
    }

    /// A promotional or win-back offer (`kind`) of `productId`, as the file writes one.
    private static func identifiedOffer(
        kind: String, of productId: String, identifier: String, referenceName: String, mode: OfferPaymentMode,
        period: OfferPeriod, numberOfPeriods: Int, pricing: Pricing, storefront: Storefront,
        ids: inout StableIdentifiers, field: String
    ) throws(KioskError) -> Offer {
        Offer(
            internalID: ids.make("\(kind):\(productId):\(identifier)"), offerID: identifier,
            referenceName: referenceName, paymentMode: PaymentMode(mode), subscriptionPeriod: period,
            numberOfPeriods: writtenPeriods(mode, numberOfPeriods),
            displayPrice: try offerPrice(mode, pricing, in: storefront, of: productId, field: field))
    }

    /// Xcode leaves `numberOfPeriods` out for single-period offers other than pay-as-you-go.
    private static func writtenPeriods(_ mode: OfferPaymentMode, _ count: Int) -> Int? {
        mode == .payAsYouGo || count != 1 ? count : nil
    }

    private static func offerPrice(
        _ mode: OfferPaymentMode, _ pricing: Pricing, in storefront: Storefront, of productId: String, field: String
    ) throws(KioskError) -> String? {
        mode == .freeTrial ? nil : try displayPrice(pricing, in: storefront, of: productId, field: field)
    }

    /// The custom price in the storefront, else the tier's price there, as a decimal string.
    private static func displayPrice(
        _ pricing: Pricing, in storefront: Storefront, of productId: String, field: String
    ) throws(KioskError) -> String {
        let minorUnits =
            pricing.customPrices[storefront.code]
            ?? pricing.tier.flatMap {
                PriceTable.price(tier: $0, in: storefront)
            }
        guard let minorUnits else {
            var error = exportError("There is no price in the \(storefront.code) storefront.", field: field)
            error.productId = productId
            throw error
        }
        return storefront.currency.decimalString(minorUnits: minorUnits)
    }

    private static func exportError(_ message: String, field: String) -> KioskError {
        KioskError(
            .storekitExportFailed, message, field: field,
            fix: "Complete the product (price, group, duration), or export for a storefront where it has a price "
                + "(`kiosk catalog export --format storekit --storefront FIN`).")
    }
}

/// Xcode-style ids (8 upper-case hex digits) derived from a name with 64-bit FNV-1a, so the same catalog always
/// gets the same ids; a clash within one file is resolved by rehashing with a counter.
struct StableIdentifiers {
    private var used = Set<String>()

    mutating func make(_ name: String) -> String {
        var attempt = 0
        while true {
            let seed = attempt == 0 ? name : "\(name)#\(attempt)"
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in seed.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
            let folded = UInt32(truncatingIfNeeded: hash >> 32) ^ UInt32(truncatingIfNeeded: hash)
            let hex = String(folded, radix: 16, uppercase: true)
            let id = String(repeating: "0", count: 8 - hex.count) + hex
            if used.insert(id).inserted { return id }
            attempt += 1
        }
    }
}
