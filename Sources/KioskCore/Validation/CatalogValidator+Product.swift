extension CatalogValidator {
    /// App Store Connect's longest in-app purchase display name.
    public static let displayNameMaxLength = 35
    /// App Store Connect's longest in-app purchase description.
    public static let descriptionMaxLength = 55

    /// The codes of the rules only App Store review applies (texts, their lengths, the characters of ids and names):
    /// the console refuses them as App Store Connect does, an imported file keeps them as warnings, the sandbox sells
    /// such a product and production does not (``reviewFindings(of:)``).
    public static let reviewRuleCodes: Set<ErrorCode> = [
        .invalidProductId, .invalidReferenceName, .invalidLocale, .invalidDisplayName, .invalidDescription,
    ]

    /// What App Store review would refuse in a product: broken review rules (``reviewRuleCodes``), and no
    /// localization with a display name and a description. Empty when review has nothing to object to.
    public static func reviewFindings(of product: Product) -> [KioskError] {
        var findings = validate(product: product, field: "product").filter { reviewRuleCodes.contains($0.code) }
        let described = product.localizations.contains {
            !$0.displayName.allSatisfy(\.isWhitespace) && !$0.description.allSatisfy(\.isWhitespace)
        }
        if !described {
            findings.append(
                KioskError(
                    .missingLocalization, "The product has no localization with a display name and a description.",
                    field: "product.localizations", fix: "Add a display name and a description customers see."))
        }
        return findings
    }

    /// Checks everything about a product that can be checked without the rest of the catalog: its id, reference
    /// name, localizations, pricing, the rules of its type and its offers. It does not require completeness (a
    /// product may be saved without a price or localization; see `Product.missingMetadata(storefronts:)`).
    public static func validate(product: Product, field: String = "product") -> [KioskError] {
        var errors = validateProductId(product.productId, field: "\(field).productId")
        errors += validateReferenceName(product.referenceName, field: "\(field).referenceName")
        errors += validateLocalizations(product.localizations, field: "\(field).localizations")
        errors += validatePricing(product.pricing, field: "\(field).pricing")
        errors += validateTypeRules(of: product, field: field)
        errors += validateOffers(of: product, field: field)
        errors += validateMonthlyPlan(of: product, field: field)
        errors += validateTerritoryAvailability(of: product, field: field)
        return errors
    }

    /// Checks that every territory an availability lists is one of the storefront table's.
    static func validateTerritoryAvailability(of product: Product, field: String) -> [KioskError] {
        guard let availability = product.territoryAvailability else { return [] }
        let unknown = availability.territories.filter { Storefront.named($0) == nil }.sorted()
        guard !unknown.isEmpty else { return [] }
        return [
            KioskError(
                .unknownStorefront,
                "\(unknown.prefix(5).map { "'\($0.prefix(8))'" }.joined(separator: ", ")) "
                    + (unknown.count == 1 ? "is not a territory." : "are not territories."),
                field: "\(field).territoryAvailability.territories",
                fix: "Name territories by their alpha-3 codes, such as USA or FRA (GET /v1/territories lists them).")
        ]
    }

    /// Checks a monthly plan as App Store Connect does (Apple's "Supporting monthly subscriptions with a 12-month
    /// commitment"): only a one-year auto-renewable has one, its pricing is valid and not empty, and in every
    /// storefront where both plans have a price, the commitment's total (12 monthly payments) is at least the
    /// up-front price and at most one and a half times it.
    static func validateMonthlyPlan(of product: Product, field: String) -> [KioskError] {
        guard let plan = product.monthlyPlan else { return [] }
        let path = "\(field).monthlyPlan"
        guard product.type == .autoRenewable, product.duration == MonthlyPlan.commitmentDuration else {
            return [
                KioskError(
                    .invalidBillingPlan,
                    "Only a one-year auto-renewable subscription has a monthly plan with a 12-month commitment; "
                        + "\(product.productId) is \(product.type.appleName)"
                        + (product.duration.map { " with a duration of \($0.rawValue)" } ?? "") + ".",
                    field: path, fix: "Remove the monthly plan, or make the product a P1Y auto-renewable.")
            ]
        }
        if plan.pricing.isEmpty {
            return [
                KioskError(
                    .invalidBillingPlan, "The monthly plan has no price.", field: "\(path).pricing",
                    fix: "Give the monthly payment a tier or custom prices.")
            ]
        }
        var errors = validatePricing(plan.pricing, field: "\(path).pricing")
        // Both prices within Pricing's bounds before they are multiplied (an invalid up-front price is reported
        // by the product's own pricing check).
        guard errors.isEmpty, validatePricing(product.pricing).isEmpty else { return errors }
        let bounds = MonthlyPlan.commitmentPercentOfUpFront
        for storefront in Storefront.all {
            guard let upFront = product.pricing.price(in: storefront),
                let total = plan.commitmentPrice(in: storefront),
                total * 100 < upFront * bounds.lowerBound || total * 100 > upFront * bounds.upperBound
            else { continue }
            let currency = storefront.currency
            errors.append(
                KioskError(
                    .invalidBillingPlan,
                    "In \(storefront.code) the 12 monthly payments come to \(currency.decimalString(minorUnits: total)) "
                        + "\(currency.code) against \(currency.decimalString(minorUnits: upFront)) up front; App Store "
                        + "Connect wants the commitment's total from the up-front price to one and a half times it.",
                    field: "\(path).pricing",
                    fix: "Price the monthly payment between \(currency.decimalString(minorUnits: (upFront + 11) / 12)) "
                        + "and \(currency.decimalString(minorUnits: upFront * 3 / 24)) \(currency.code)."))
            if errors.count >= 5 { break }
        }
        return errors
    }

    /// Checks localizations: each locale is one of `AppStoreLocale.all` (hyphen or underscore), no locale twice,
    /// display names of 1–35 characters and descriptions of 1–55.
    public static func validateLocalizations(
        _ localizations: [ProductLocalization], field: String = "localizations"
    ) -> [KioskError] {
        var errors: [KioskError] = []
        var seen: [String: Int] = [:]
        for (index, localization) in localizations.enumerated() {
            let path = "\(field)[\(index)]"
            if let locale = AppStoreLocale.normalized(localization.locale) {
                if let first = seen[locale] {
                    errors.append(
                        KioskError(
                            .duplicateLocale, "The locale \(locale) appears twice (also at \(field)[\(first)]).",
                            field: "\(path).locale", fix: "Keep one localization per locale."))
                } else {
                    seen[locale] = index
                }
            } else {
                errors.append(
                    KioskError(
                        .invalidLocale, "'\(localization.locale)' is not an App Store Connect locale.",
                        field: "\(path).locale",
                        fix: "Use one of: \(AppStoreLocale.all.joined(separator: ", "))."))
            }
            errors += validateText(
                localization.displayName, code: .invalidDisplayName, what: "display name",
                limit: displayNameMaxLength, field: "\(path).displayName")
            errors += validateText(
                localization.description, code: .invalidDescription, what: "description",
                limit: descriptionMaxLength, field: "\(path).description")
        }
        return errors
    }

    /// Checks a pricing: a tier, if any, is in 1...20; custom prices name known storefronts and are positive, up to
    /// ``Pricing/maximumMinorUnits``.
    public static func validatePricing(_ pricing: Pricing, field: String = "pricing") -> [KioskError] {
        var errors: [KioskError] = []
        if let tier = pricing.tier, !PriceTable.tiers.contains(tier) {
            errors.append(
                KioskError(
                    .invalidPriceTier, "Price tier \(tier) does not exist.", field: "\(field).tier",
                    fix: "Choose a tier from \(PriceTable.tiers.lowerBound) to \(PriceTable.tiers.upperBound)."))
        }
        for (code, amount) in pricing.customPrices.sorted(by: { $0.key < $1.key }) {
            let path = "\(field).customPrices.\(code)"
            guard let storefront = Storefront.named(code) else {
                errors.append(
                    KioskError(
                        .unknownStorefront, "'\(code)' is not a storefront Kiosk knows.", field: path,
                        fix: "Use an ISO 3166-1 alpha-3 storefront code such as USA, CHN or JPN."))
                continue
            }
            if amount > Pricing.maximumMinorUnits {
                errors.append(
                    KioskError(
                        .invalidPriceAmount,
                        "The custom price in \(storefront.code) is \(storefront.currency.text(minorUnits: amount)) "
                            + "(\(amount) in minor units), more than any price can be.",
                        field: path,
                        fix: "Give a price of at most "
                            + "\(storefront.currency.text(minorUnits: Pricing.maximumMinorUnits)).")
                )
            }
            if amount <= 0 {
                errors.append(
                    KioskError(
                        .invalidPriceAmount,
                        "The custom price in \(storefront.code) is \(storefront.currency.text(minorUnits: amount)); "
                            + "a price must be positive.",
                        field: path,
                        fix: "Give the price in minor units of \(storefront.currency.code), e.g. "
                            + "\(PriceTable.price(tier: 1, in: storefront) ?? 1) for tier 1's "
                            + "\(storefront.currency.text(minorUnits: PriceTable.price(tier: 1, in: storefront) ?? 1))."
                    ))
            }
        }
        return errors
    }

    /// Checks the rules that depend on the product type: auto-renewables need a group, a level ≥ 1 and a duration;
    /// other types have no group; consumables and non-consumables have no duration; only non-consumables and
    /// auto-renewables can be family-shareable.
    static func validateTypeRules(of product: Product, field: String) -> [KioskError] {
        var errors: [KioskError] = []
        let typeName = product.type.appleName
        if product.type == .autoRenewable {
            if let subscription = product.subscription {
                if !CatalogValidator.subscriptionLevels.contains(subscription.level) {
                    errors.append(
                        KioskError(
                            .invalidSubscriptionLevel,
                            "The subscription level is \(subscription.level); levels run from 1 (the highest) to "
                                + "\(CatalogValidator.subscriptionLevels.upperBound).",
                            field: "\(field).subscription.level",
                            fix: "Give a level from 1 to \(CatalogValidator.subscriptionLevels.upperBound)."))
                }
            } else {
                errors.append(
                    KioskError(
                        .missingSubscriptionGroup, "An auto-renewable subscription must belong to a group.",
                        field: "\(field).subscription",
                        fix: "Create a subscription group and set the product's group and level."))
            }
            if product.duration == nil {
                errors.append(
                    KioskError(
                        .missingDuration, "An auto-renewable subscription needs a duration.",
                        field: "\(field).duration",
                        fix: "Choose one of \(SubscriptionDuration.allCases.map(\.rawValue).joined(separator: ", "))."))
            }
        } else if product.subscription != nil {
            errors.append(
                KioskError(
                    .unexpectedSubscriptionGroup, "A \(typeName) product cannot belong to a subscription group.",
                    field: "\(field).subscription",
                    fix: "Remove the group, or make the product an auto-renewable subscription."))
        }
        if product.duration != nil, product.type == .consumable || product.type == .nonConsumable {
            errors.append(
                KioskError(
                    .unexpectedDuration, "A \(typeName) product has no duration.", field: "\(field).duration",
                    fix: "Remove the duration, or make the product a subscription."))
        }
        if product.familyShareable, product.type == .consumable || product.type == .nonRenewing {
            errors.append(
                KioskError(
                    .familySharingNotSupported,
                    "Family Sharing is only for non-consumables and auto-renewable subscriptions, not \(typeName).",
                    field: "\(field).familyShareable", fix: "Turn Family Sharing off for this product."))
        }
        return errors
    }
}
