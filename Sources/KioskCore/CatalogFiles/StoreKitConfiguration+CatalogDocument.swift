import Foundation

extension StoreKitConfiguration {
    /// Reads a `.storekit` file and turns it into a catalog to import, with every warning of both steps.
    ///
    /// - Throws: `KioskError` `invalid_storekit_file` with every problem of the file (the first, the rest in
    ///   `additional`), each naming its path in the file and its product id.
    public static func importing(_ data: Data, bundleId: String, appName: String) throws(KioskError)
        -> CatalogFileImport
    {
        let log = CatalogFileLog(errorCode: errorCode)
        let configuration = try read(from: data, log: log)
        // Converted even when reading found errors, so the problems of both steps come in one report.
        let result = try configuration.catalogImport(bundleId: bundleId, appName: appName, log: log)
        try log.throwErrors()
        return result
    }

    /// The catalog this configuration describes, in Kiosk's terms (see ``catalogImport(bundleId:appName:)``).
    public func catalogDocument(bundleId: String, appName: String) throws(KioskError) -> CatalogDocument {
        try catalogImport(bundleId: bundleId, appName: appName).document
    }

    /// The catalog this configuration describes, in Kiosk's terms, with what the import must warn about.
    ///
    /// Prices keep the file's storefront and amount: each becomes a custom price in `_storefront` (a tier only
    /// where the file names one, which Xcode's files do not). Locales map to App Store Connect's (`de` → `de_DE`,
    /// `zh_Hans` → `zh_CN`, each mapping a warning); groups are named by their `name`, levels come from
    /// `groupNumber`, and `reviewState` is left nil for the importer to decide. What only App Store review would
    /// refuse (empty or long texts, characters in ids) is a warning, not an error: the sandbox sells it, production
    /// does not. A one-year subscription's `MONTHLY` billing plan becomes its monthly plan (sold with a 12-month
    /// commitment). Parts Kiosk keeps without using (offer codes, the monthly plan's offers) are warnings too, and so
    /// are win-back offers without eligibility rules (see `Converter.winBackOffer`).
    ///
    /// - Throws: `KioskError` `invalid_storekit_file` with every problem the sandbox cannot sell with: an unknown
    ///   `_storefront`, a price that is not an amount, a paid offer without a price, a promotional or win-back
    ///   offer without `offerID`, a product id or group name used twice.
    public func catalogImport(bundleId: String, appName: String) throws(KioskError) -> CatalogFileImport {
        let log = CatalogFileLog(errorCode: Self.errorCode)
        let result = try catalogImport(bundleId: bundleId, appName: appName, log: log)
        try log.throwErrors()
        return result
    }

    /// The conversion, recording problems in `log`; throws only when the storefront is unknown (no price can be
    /// read then).
    private func catalogImport(bundleId: String, appName: String, log: CatalogFileLog) throws(KioskError)
        -> CatalogFileImport
    {
        guard let storefront = Storefront.named(storefrontCode) else {
            log.error(
                "'\(storefrontCode)' is not a storefront Kiosk knows.", at: "settings._storefront", productId: nil,
                fix: "Use an ISO 3166-1 alpha-3 code such as USA.")
            try log.throwErrors()
            preconditionFailure("throwErrors throws after an error")
        }
        if settings["_storefront"] == nil {
            log.warning(
                "storefront_assumed",
                "The file names no storefront (settings._storefront); its prices are read in "
                    + "USD, as Xcode does.", at: "settings", productId: nil)
        }
        noteTestSettings(log: log)
        var converter = Converter(prices: PriceReader(storefront: storefront, log: log), log: log)
        for (index, product) in products.enumerated() {
            let type: ProductType = product.type == .consumable ? .consumable : .nonConsumable
            converter.add(product, type: type, path: "products[\(index)]")
        }
        for (index, product) in nonRenewingSubscriptions.enumerated() {
            converter.add(product, type: .nonRenewing, path: "nonRenewingSubscriptions[\(index)]")
        }
        for (groupIndex, group) in subscriptionGroups.enumerated() {
            converter.add(group, path: "subscriptionGroups[\(groupIndex)]")
        }
        converter.noteLocaleMappings()
        converter.noteUnsupported(self)
        return CatalogFileImport(
            document: CatalogDocument(
                app: CatalogDocument.AppEntry(bundleId: bundleId, name: appName),
                subscriptionGroups: converter.groups, products: converter.entries),
            warnings: log.warnings, sourcePaths: converter.sourcePaths, fieldNames: Self.catalogFieldNames,
            storeKitFile: self)
    }

    /// App Store Connect's locale for a file's: `en-US` → `en_US`, `zh_Hans` → `zh_CN`, a bare language `de` →
    /// `de_DE`; one App Store Connect does not know stays as written (review reports it).
    static func catalogLocale(_ locale: String) -> String {
        AppStoreLocale.normalized(locale) ?? AppStoreLocale.forLanguage(locale) ?? locale
    }

    /// Xcode's test switches (failing transactions, Ask to Buy, billing issues, error injection, time rate) are
    /// kept and written back, but not applied: one warning names those turned on.
    private func noteTestSettings(log: CatalogFileLog) {
        var on = settings.filter { key, value in
            key.hasSuffix("Enabled") && value == .bool(true)
        }.keys.sorted()
        if let rate = settings["_timeRate"], rate != .integer(0) { on.append("_timeRate") }
        if case .array(let errors)? = settings["_storeKitErrors"],
            errors.contains(where: {
                if case .object(let entry) = $0 { entry["enabled"] == .bool(true) } else { false }
            })
        {
            on.append("_storeKitErrors")
        }
        guard !on.isEmpty else { return }
        log.warning(
            "test_settings_not_applied",
            "Xcode's test settings \(on.joined(separator: ", ")) are kept and written back on export, but Kiosk's "
                + "sandbox does not apply them.",
            at: "settings", productId: nil,
            fix: "Use Kiosk's test controls instead: `kiosk test fail-next`, tester settings (Ask to Buy, payment "
                + "outcome, renewal rate), `kiosk test clock`.")
    }

    /// The file's names of the catalog's product fields, where they differ.
    static let catalogFieldNames = [
        "productId": "productID", "pricing": "displayPrice", "subscription": "groupNumber",
        "duration": "recurringSubscriptionPeriod", "promotionalOffers": "adHocOffers",
        "introductoryOffers": "introductoryOffer", "winBackOffers": "winbackOffers",
    ]

    static func invalid(_ message: String, field: String, fix: String) -> KioskError {
        KioskError(errorCode, message, field: field, fix: fix)
    }

    /// Version 5's name of the ordinary plan, whose price is the product's `displayPrice`.
    public static let upFrontPlan = BillingPlanType.billedUpFront.rawValue
    /// Version 5's name of the monthly plan with a 12-month commitment, which imports as the product's monthly plan.
    public static let monthlyPlan = BillingPlanType.monthly.rawValue

    static func isUpFrontPlan(_ offer: Offer) -> Bool {
        offer.billingPlanType == nil || offer.billingPlanType == upFrontPlan
    }

    /// Builds the document's entries from the file's, recording each problem at its path in the file.
    private struct Converter {
        let prices: PriceReader
        let log: CatalogFileLog
        var entries: [CatalogDocument.ProductEntry] = []
        var groups: [CatalogDocument.GroupEntry] = []
        var sourcePaths: [String: String] = [:]
        let localeMappings = LocaleMappings()

        mutating func add(_ product: ProductEntry, type: ProductType, path: String) {
            let id = product.productID
            guard sourcePaths["product:\(id)"] == nil else {
                log.error(
                    "Product '\(id)' appears more than once (first at \(sourcePaths["product:\(id)"] ?? "")).",
                    at: "\(path).productID", productId: id, fix: "Keep one product per product id.")
                return
            }
            sourcePaths["product:\(id)"] = path
            var entry = CatalogDocument.ProductEntry(
                productId: id, referenceName: product.referenceName, type: type,
                pricing: prices.pricing(product.displayPrice, path: "\(path).displayPrice", productId: id)
                    ?? Pricing(),
                localizations: product.localizations.enumerated().map { index, localization in
                    ProductLocalization(
                        locale: mappedLocale(localization.locale, path: "\(path).localizations[\(index)].locale", id),
                        displayName: localization.displayName, description: localization.description)
                },
                familyShareable: product.familyShareable)
            if type == .autoRenewable { addSubscriptionParts(product, to: &entry, path: path) }
            entries.append(entry)
        }

        mutating func add(_ group: Group, path: String) {
            if let first = sourcePaths["group:\(group.name)"] {
                log.error(
                    "Subscription group '\(group.name)' appears more than once (first at \(first)).",
                    at: "\(path).name", productId: nil, fix: "Give each group a distinct name.")
                return
            }
            sourcePaths["group:\(group.name)"] = path
            groups.append(
                CatalogDocument.GroupEntry(
                    referenceName: group.name,
                    localizations: group.localizations.enumerated().map { index, localization in
                        SubscriptionGroupLocalization(
                            locale: mappedLocale(
                                localization.locale, path: "\(path).localizations[\(index)].locale", nil),
                            name: localization.displayName, customAppName: localization.customAppName)
                    }))
            for (index, subscription) in group.subscriptions.enumerated() {
                let before = entries.count
                add(subscription, type: .autoRenewable, path: "\(path).subscriptions[\(index)]")
                if entries.count > before {
                    entries[before].subscription = CatalogDocument.ProductEntry.Membership(
                        group: group.name, level: subscription.groupNumber ?? 1)
                }
            }
        }

        private func addSubscriptionParts(
            _ product: ProductEntry, to entry: inout CatalogDocument.ProductEntry, path: String
        ) {
            let id = product.productID
            entry.duration = product.recurringSubscriptionPeriod
            let introductory: [(Offer, String)] =
                if let offers = product.introductoryOffers {
                    offers.enumerated().filter { isUpFrontPlan($0.element) }.map {
                        ($0.element, "\(path).introductoryOffers[\($0.offset)]")
                    }
                } else {
                    product.introductoryOffer.map { [($0, "\(path).introductoryOffer")] } ?? []
                }
            if let (offer, offerPath) = introductory.first,
                let pricing = prices.offerPricing(offer, path: offerPath, id)
            {
                entry.introductoryOffers = [
                    IntroductoryOffer(
                        schedule: offer.schedule(pricing: pricing))
                ]
            }
            var promotional: [PromotionalOffer] = []
            for (index, offer) in product.adHocOffers.enumerated() where isUpFrontPlan(offer) {
                let offerPath = "\(path).adHocOffers[\(index)]"
                guard let identifier = offer.offerID, !identifier.isEmpty else {
                    log.error(
                        "The promotional offer has no offer identifier.", at: "\(offerPath).offerID", productId: id,
                        fix: "Set the offer's identifier in Xcode.")
                    continue
                }
                guard let pricing = prices.offerPricing(offer, path: offerPath, id) else { continue }
                promotional.append(
                    PromotionalOffer(
                        identifier: identifier, referenceName: offer.referenceName ?? identifier,
                        schedule: offer.schedule(pricing: pricing)))
            }
            entry.promotionalOffers = promotional.sorted { $0.identifier < $1.identifier }
            entry.winBackOffers = (product.winbackOffers ?? []).enumerated().compactMap { index, winBack in
                self.winBackOffer(winBack, path: "\(path).winbackOffers[\(index)]", id)
            }
            entry.monthlyPlan = importedMonthlyPlan(of: product, path: path)
        }

        /// The catalog's monthly plan for the file's enabled `MONTHLY` billing plan (Xcode 26.5's "Monthly with a
        /// 12-month commitment"): its `displayPrice` is the monthly payment. A `commitmentDisplayPrice` other than 12
        /// payments of it is a warning (Kiosk charges 12 of the monthly price); one without a valid price, an error.
        private func importedMonthlyPlan(of product: ProductEntry, path: String) -> MonthlyPlan? {
            let id = product.productID
            for (index, value) in (product.billingPlans ?? []).enumerated() {
                guard case .object(let plan) = value, plan["billingPlanType"] == .string(monthlyPlan),
                    plan["isEnabled"] != .bool(false)
                else { continue }
                let planPath = "\(path).billingPlans[\(index)]"
                guard product.recurringSubscriptionPeriod == MonthlyPlan.commitmentDuration else {
                    log.warning(
                        "kept_not_used",
                        "A monthly plan with a 12-month commitment belongs to a one-year subscription; this one renews "
                            + "every \(product.recurringSubscriptionPeriod?.rawValue ?? "(no period)"), so the plan is "
                            + "kept and written back on export, not sold.",
                        at: planPath, productId: id)
                    return nil
                }
                guard let text = plan["displayPrice"]?.stringValue else {
                    log.error(
                        "The monthly billing plan has no displayPrice.", at: "\(planPath).displayPrice", productId: id,
                        fix: "Set the plan's monthly price in Xcode.")
                    return nil
                }
                guard let pricing = prices.pricing(text, path: "\(planPath).displayPrice", productId: id) else {
                    return nil
                }
                let monthly = MonthlyPlan(pricing: pricing)
                let currency = prices.storefront.currency
                if let written = monthly.commitmentPrice(in: prices.storefront),
                    let stated = plan["commitmentDisplayPrice"]?.stringValue.flatMap({
                        currency.minorUnits(decimalString: $0)
                    }), stated != written
                {
                    log.warning(
                        "commitment_price_recomputed",
                        "The plan's commitmentDisplayPrice is \(currency.decimalString(minorUnits: stated)); Kiosk "
                            + "charges 12 payments of \(text), \(currency.decimalString(minorUnits: written)) in all.",
                        at: "\(planPath).commitmentDisplayPrice", productId: id,
                        fix: "Save the file again in Xcode, which writes 12 times the monthly price.")
                }
                return monthly
            }
            return nil
        }

        /// The catalog's win-back offer for the file's; nil (and an error) without an offer id or a valid price.
        /// Eligibility the file does not give (Xcode writes none) takes App Store Connect's loosest choice, with a
        /// warning: 1 paid month, at least 1 month since the subscription ended and no maximum, no wait between
        /// offers, no dates, normal priority.
        private func winBackOffer(_ winBack: WinBackEntry, path: String, _ id: String) -> WinBackOffer? {
            let offer = winBack.offer
            guard let identifier = offer.offerID, !identifier.isEmpty else {
                log.error(
                    "The win-back offer has no offer identifier.", at: "\(path).offerID", productId: id,
                    fix: "Set the offer's identifier in Xcode.")
                return nil
            }
            guard let pricing = prices.offerPricing(offer, path: path, id) else { return nil }
            if winBack.paidSubscriptionDurationInMonths == nil || winBack.timeSinceLastSubscribedInMonths == nil {
                let switchNote =
                    winBack.isEligible == nil
                    ? "" : " Xcode's isEligible switch is kept and written back but not applied."
                log.warning(
                    "win_back_eligibility_defaulted",
                    "The win-back offer '\(identifier)' has no eligibility rules; it imports for customers who paid "
                        + "at least 1 month and whose subscription ended at least 1 month ago, with no wait between "
                        + "offers.\(switchNote)",
                    at: path, productId: id,
                    fix: "Set the rules with `kiosk offers update-win-back`, or add "
                        + "customerEligibilityPaidSubscriptionDurationInMonths and "
                        + "customerEligibilityTimeSinceLastSubscribedInMonths to the offer.")
            }
            return WinBackOffer(
                identifier: identifier, referenceName: offer.referenceName ?? identifier,
                schedule: offer.schedule(pricing: pricing),
                paidSubscriptionDurationInMonths: winBack.paidSubscriptionDurationInMonths ?? 1,
                timeSinceLastSubscribedInMonths: winBack.timeSinceLastSubscribedInMonths
                    ?? WinBackOffer.MonthRange(minimum: 1),
                waitBetweenOffersInMonths: winBack.waitBetweenOffersInMonths, startDate: winBack.startDate,
                endDate: winBack.endDate, priority: winBack.priority ?? .normal)
        }

        /// App Store Connect's locale for the file's: `en-US` → `en_US` silently, `de` → `de_DE` and `zh_Hans` →
        /// `zh_CN` with a warning; one App Store Connect does not know stays as written, with a warning.
        private func mappedLocale(_ locale: String, path: String, _ productId: String?) -> String {
            let mapped = StoreKitConfiguration.catalogLocale(locale)
            if mapped.lowercased() != locale.replacingOccurrences(of: "-", with: "_").lowercased() {
                localeMappings.record(locale, as: mapped, at: path, productId: productId)
            }
            return mapped
        }

        /// One warning per locale mapped (`de` → `de_DE`), at its first place in the file, counting the others.
        func noteLocaleMappings() {
            for mapping in localeMappings.mappings {
                let what =
                    AppStoreLocale.normalized(mapping.from) == nil
                    ? "names a language without a region; it imports as \(mapping.to), App Store Connect's locale for "
                        + "that language"
                    : "imports as \(mapping.to), App Store Connect's locale for it"
                let more = mapping.count > 1 ? " (here and in \(mapping.count - 1) more places)" : ""
                log.warning(
                    "locale_mapped", "The locale '\(mapping.from)' \(what)\(more).", at: mapping.path,
                    productId: mapping.productId)
            }
        }

        /// Warnings for what the file holds that Kiosk keeps but does not use.
        func noteUnsupported(_ configuration: StoreKitConfiguration) {
            for (groupIndex, group) in configuration.subscriptionGroups.enumerated() {
                let groupPath = "subscriptionGroups[\(groupIndex)]"
                let described = group.localizations.indices.filter { !group.localizations[$0].description.isEmpty }
                if let first = described.first {
                    log.warning(
                        "kept_not_used",
                        "Kiosk keeps the group's descriptions (\(described.count) of its localizations have one) and "
                            + "writes them back on export, but does not show them.",
                        at: "\(groupPath).localizations[\(first)].description", productId: nil)
                }
                for (index, subscription) in group.subscriptions.enumerated() {
                    let path = "\(groupPath).subscriptions[\(index)]"
                    let id = subscription.productID
                    if !subscription.codeOffers.isEmpty {
                        log.warning(
                            "kept_not_used",
                            "Offer codes are kept and written back on export, not imported: create them with "
                                + "`kiosk offer-codes`.",
                            at: "\(path).codeOffers", productId: id)
                    }
                    if (subscription.introductoryOffers ?? []).contains(where: { !isUpFrontPlan($0) }) {
                        log.warning(
                            "kept_not_used",
                            "Offers of the monthly billing plan are kept and written back on export, not sold: Kiosk "
                                + "sells the monthly plan at its price, without offers.",
                            at: "\(path).introductoryOffers", productId: id)
                    }
                    if subscription.adHocOffers.contains(where: { !isUpFrontPlan($0) }) {
                        log.warning(
                            "kept_not_used",
                            "Offers of the monthly billing plan are kept and written back on export, not sold: Kiosk "
                                + "sells the monthly plan at its price, without offers.",
                            at: "\(path).adHocOffers", productId: id)
                    }
                    let known: Set<JSONValue?> = [.string(upFrontPlan), .string(monthlyPlan)]
                    if (subscription.billingPlans ?? []).contains(where: {
                        if case .object(let plan) = $0 { !known.contains(plan["billingPlanType"]) } else { true }
                    }) {
                        log.warning(
                            "kept_not_used",
                            "Billing plans other than \(upFrontPlan) and \(monthlyPlan) are kept and written back on "
                                + "export, not sold: a payment that names one (billingPlanType) is refused.",
                            at: "\(path).billingPlans",
                            productId: id)
                    }
                }
            }
        }
    }

    /// The locales a conversion mapped, in the order first met, each with its first place and how often.
    private final class LocaleMappings {
        struct Mapping {
            var from: String
            var to: String
            var path: String
            var productId: String?
            var count: Int
        }
        private(set) var mappings: [Mapping] = []

        func record(_ from: String, as to: String, at path: String, productId: String?) {
            if let index = mappings.firstIndex(where: { $0.from == from }) {
                mappings[index].count += 1
            } else {
                mappings.append(Mapping(from: from, to: to, path: path, productId: productId, count: 1))
            }
        }
    }

    /// Reads `displayPrice` strings in the file's storefront currency, exactly.
    private struct PriceReader {
        let storefront: Storefront
        let log: CatalogFileLog

        /// A custom price in the storefront; nil (and an error) for text that is not an amount.
        func pricing(_ text: String, path: String, productId: String) -> Pricing? {
            let currency = storefront.currency
            if let minorUnits = currency.minorUnits(decimalString: text), minorUnits > 0,
                minorUnits <= Pricing.maximumMinorUnits
            {
                return Pricing(customPrices: [storefront.code: minorUnits])
            }
            if let rounded = currency.roundedMinorUnits(decimalString: text), rounded > 0,
                rounded <= Pricing.maximumMinorUnits
            {
                let written = currency.decimalString(minorUnits: rounded)
                log.warning(
                    "price_rounded",
                    "'\(text)' has more decimals than \(currency.code) has (\(currency.minorUnitExponent)); it imports "
                        + "as \(written).",
                    at: path, productId: productId,
                    fix: "Write the price as \(currency.code) is paid, e.g. \"\(written)\".")
                return Pricing(customPrices: [storefront.code: rounded])
            }
            let example = currency.decimalString(minorUnits: currency.minorUnitExponent == 0 ? 120 : 99)
            log.error(
                "'\(text)' is not a price in \(currency.code) (\(storefront.code) storefront).", at: path,
                productId: productId,
                fix: "Write a positive plain decimal with at most \(currency.minorUnitExponent) digits after the "
                    + "point, such as \"\(example)\".")
            return nil
        }

        /// An offer's pricing (none for a free trial); nil (and an error) when a paid offer has no valid price.
        func offerPricing(_ offer: Offer, path: String, _ productId: String) -> Pricing? {
            guard offer.paymentMode != .free else { return Pricing() }
            guard let text = offer.displayPrice else {
                log.error(
                    "A \(offer.paymentMode.rawValue) offer needs a price.", at: "\(path).displayPrice",
                    productId: productId, fix: "Set the offer's price.")
                return nil
            }
            return pricing(text, path: "\(path).displayPrice", productId: productId)
        }
    }
}

extension Currency {
    /// The amount of a plain decimal with more fraction digits than the currency has, rounded half up to its
    /// minor units (`"119.99"` yen → 120); nil for text that is not a plain decimal or too large.
    func roundedMinorUnits(decimalString text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count > minorUnitExponent, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
            let whole = minorUnits(
                decimalString: String(parts[0]) + "."
                    + parts[1].prefix(minorUnitExponent)
                    .padding(toLength: max(minorUnitExponent, 1), withPad: "0", startingAt: 0)),
            let next = parts[1].dropFirst(minorUnitExponent).first, next.isASCII, let digit = next.wholeNumberValue
        else { return nil }
        let (rounded, overflow) = whole.addingReportingOverflow(digit >= 5 ? 1 : 0)
        return overflow ? nil : rounded
    }
}

extension StoreKitConfiguration.Offer {
    /// The offer's terms in the catalog, at `pricing` (the file's price read as the catalog's).
    func schedule(pricing: Pricing) -> OfferSchedule {
        OfferSchedule(
            paymentMode: paymentMode.offerPaymentMode, period: subscriptionPeriod,
            numberOfPeriods: numberOfPeriods ?? 1,
            pricing: pricing)
    }
}
