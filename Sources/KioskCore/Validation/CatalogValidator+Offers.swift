extension CatalogValidator {
    /// The most periods a pay-as-you-go offer may run, as App Store Connect allows (1–12).
    public static let payAsYouGoMaxPeriods = 12
    /// The longest offer period Kiosk accepts per unit: 3 days to 1 year in App Store Connect; Kiosk allows any
    /// count up to these bounds (days ≤ 31, weeks ≤ 52, months ≤ 12, years 1).
    public static let offerPeriodMaxCount: [OfferPeriod.Unit: Int] = [.day: 31, .week: 52, .month: 12, .year: 1]

    /// The most months a win-back offer's eligibility counts (paid duration, time since last subscribed, wait
    /// between offers): Kiosk's bound, ten years, far above App Store Connect's choices.
    public static let winBackMaxMonths = 120

    /// Checks a product's introductory, promotional and win-back offers.
    ///
    /// Offers exist only on auto-renewable subscriptions. Each offer has a sane period, a number of periods
    /// (exactly 1 for free trials and pay-up-front offers, whose period is the whole offer; 1–12 for pay-as-you-go)
    /// and, unless it is a free trial, a valid non-empty pricing. Promotional offer identifiers follow the product-id
    /// rules and are unique within the product. Introductory offers: at most one per storefront, where an offer
    /// without a storefront applies to all of them and so conflicts with any other.
    static func validateOffers(of product: Product, field: String) -> [KioskError] {
        var errors: [KioskError] = []
        let offerLists = [
            ("introductoryOffers", product.introductoryOffers.isEmpty),
            ("promotionalOffers", product.promotionalOffers.isEmpty), ("winBackOffers", product.winBackOffers.isEmpty),
        ]
        if product.type != .autoRenewable, let (path, _) = offerLists.first(where: { !$0.1 }) {
            errors.append(
                KioskError(
                    .offersRequireAutoRenewable,
                    "Introductory, promotional and win-back offers exist only on auto-renewable subscriptions, "
                        + "not on \(product.type.appleName) products.",
                    field: "\(field).\(path)", fix: "Remove the offers, or make the product auto-renewable."))
        }
        var storefrontsSeen: [String: Int] = [:]
        for (index, offer) in product.introductoryOffers.enumerated() {
            let path = "\(field).introductoryOffers[\(index)]"
            errors += validateOfferSchedule(offer.schedule, field: path)
            let key: String
            if let code = offer.storefront {
                guard let storefront = Storefront.named(code) else {
                    errors.append(
                        KioskError(
                            .unknownStorefront, "'\(code)' is not a storefront Kiosk knows.",
                            field: "\(path).storefront",
                            fix: "Use an alpha-3 storefront code such as USA, or none for every storefront."))
                    continue
                }
                key = storefront.code
            } else {
                key = "*"
            }
            let clash = storefrontsSeen[key] ?? (key == "*" ? storefrontsSeen.values.min() : storefrontsSeen["*"])
            if let clash {
                let scope = key == "*" ? "every storefront" : key
                errors.append(
                    KioskError(
                        .duplicateIntroductoryOffer,
                        "Two introductory offers apply to \(scope) (this one and introductoryOffers[\(clash)]).",
                        field: "\(path).storefront",
                        fix: "Keep one introductory offer per storefront; an offer without a storefront covers all."))
            } else {
                storefrontsSeen[key] = index
            }
        }
        let identifierProblems = offerIdentifierProblems(of: product)
        for (index, offer) in product.promotionalOffers.enumerated() {
            let path = "\(field).promotionalOffers[\(index)]"
            errors += identifierProblems["promotionalOffers[\(index)]", default: []].map { $0.at(field) }
            errors += validateReferenceName(offer.referenceName, field: "\(path).referenceName")
            errors += validateOfferSchedule(offer.schedule, field: path)
        }
        errors += validateWinBackOffers(of: product, field: field, identifierProblems: identifierProblems)
        return errors
    }

    /// The one rule for offer identifiers: each promotional and win-back offer of a product has its own, shaped like
    /// a product id (a payment names the offer by it). The problems are keyed by the offer's path in the product
    /// (`winBackOffers[1]`), their fields relative to the product.
    static func offerIdentifierProblems(of product: Product) -> [String: [KioskError]] {
        let named =
            product.promotionalOffers.enumerated().map { ("promotionalOffers[\($0.offset)]", $0.element.identifier) }
            + product.winBackOffers.enumerated().map { ("winBackOffers[\($0.offset)]", $0.element.identifier) }
        var problems: [String: [KioskError]] = [:]
        var firstUse: [String: String] = [:]
        for (path, identifier) in named {
            problems[path, default: []] += validateProductId(
                identifier, field: "\(path).identifier", what: "offer identifier")
            if let first = firstUse[identifier] {
                problems[path, default: []].append(
                    KioskError(
                        .duplicateOfferIdentifier, "The offer identifier '\(identifier)' is also used by \(first).",
                        field: "\(path).identifier",
                        fix: "Give each promotional and win-back offer of a product its own identifier."))
            } else {
                firstUse[identifier] = path
            }
        }
        return problems
    }

    /// Checks a product's win-back offers (their identifiers are checked with the promotional offers'): the offer
    /// terms; eligibility months of 1–``winBackMaxMonths`` with a maximum time since last subscribed not below its
    /// minimum; a start date before the end date.
    static func validateWinBackOffers(
        of product: Product, field: String, identifierProblems: [String: [KioskError]]
    ) -> [KioskError] {
        var errors: [KioskError] = []
        for (index, offer) in product.winBackOffers.enumerated() {
            let path = "\(field).winBackOffers[\(index)]"
            errors += identifierProblems["winBackOffers[\(index)]", default: []].map { $0.at(field) }
            errors += validateReferenceName(offer.referenceName, field: "\(path).referenceName")
            errors += validateOfferSchedule(offer.schedule, field: path)
            let range = offer.timeSinceLastSubscribedInMonths
            let months: [(String, Int?, String)] = [
                ("paidSubscriptionDurationInMonths", offer.paidSubscriptionDurationInMonths, "paid for"),
                ("timeSinceLastSubscribedInMonths.minimum", range.minimum, "since the last subscription ended"),
                ("timeSinceLastSubscribedInMonths.maximum", range.maximum, "since the last subscription ended"),
                ("waitBetweenOffersInMonths", offer.waitBetweenOffersInMonths, "between two win-back offers"),
            ]
            for case let (key, value?, meaning) in months where !(1...winBackMaxMonths).contains(value) {
                errors.append(
                    KioskError(
                        .invalidWinBackMonths, "\(value) is not a number of months \(meaning) Kiosk accepts.",
                        field: "\(path).\(key)", fix: "Give 1–\(winBackMaxMonths) months."))
            }
            if let maximum = range.maximum, maximum < range.minimum {
                errors.append(
                    KioskError(
                        .invalidWinBackMonths,
                        "The maximum time since last subscribed (\(maximum) months) is below its minimum "
                            + "(\(range.minimum)).",
                        field: "\(path).timeSinceLastSubscribedInMonths.maximum",
                        fix: "Give a maximum of at least the minimum, or none for no upper limit."))
            }
            if let start = offer.startDate, let end = offer.endDate, end <= start {
                errors.append(
                    KioskError(
                        .invalidOfferDates, "The win-back offer ends before it starts.",
                        field: "\(path).endDate", fix: "Give an end date after the start date, or none."))
            }
        }
        return errors
    }

    /// Checks what every offer has: a period within bounds, a number of periods fitting the payment mode, and a
    /// pricing unless it is a free trial.
    static func validateOfferSchedule(_ schedule: OfferSchedule, field: String) -> [KioskError] {
        var errors: [KioskError] = []
        let maxCount = offerPeriodMaxCount[schedule.period.unit] ?? 1
        if !(1...maxCount).contains(schedule.period.count) {
            errors.append(
                KioskError(
                    .invalidOfferPeriod, "The offer period \(schedule.period.iso8601) is out of range.",
                    field: "\(field).period",
                    fix: "Use 1–\(maxCount) of that unit, such as P3D, P1W, P1M or P1Y."))
        }
        let allowedPeriods = schedule.paymentMode == .payAsYouGo ? 1...payAsYouGoMaxPeriods : 1...1
        if !allowedPeriods.contains(schedule.numberOfPeriods) {
            let allowed = allowedPeriods.count == 1 ? "exactly 1" : "1–\(payAsYouGoMaxPeriods)"
            errors.append(
                KioskError(
                    .invalidOfferPeriods,
                    "A \(schedule.paymentMode.rawValue) offer has \(allowed) period(s), not \(schedule.numberOfPeriods).",
                    field: "\(field).numberOfPeriods",
                    fix: schedule.paymentMode == .payAsYouGo
                        ? "Give 1–\(payAsYouGoMaxPeriods) periods."
                        : "Give 1 period and put the whole offer length in the period (e.g. P3M)."))
        }
        if schedule.paymentMode != .freeTrial {
            if schedule.pricing.isEmpty {
                errors.append(
                    KioskError(
                        .missingOfferPrice, "A \(schedule.paymentMode.rawValue) offer needs a price.",
                        field: "\(field).pricing",
                        fix: "Give the offer a tier or custom prices, or make it a free trial."))
            }
            errors += validatePricing(schedule.pricing, field: "\(field).pricing")
        }
        return errors
    }
}

extension KioskError {
    /// The error with its field placed under `parent` (`product` + `winBackOffers[1].identifier`).
    fileprivate func at(_ parent: String) -> KioskError {
        var error = self
        error.field = error.field.map { "\(parent).\($0)" } ?? parent
        return error
    }
}
