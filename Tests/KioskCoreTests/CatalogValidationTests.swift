import Foundation
import KioskCore
import Testing

/// A product that passes every check; tests change one thing at a time.
private func validSubscription() -> Product {
    let epoch = Date(timeIntervalSince1970: 1_767_225_600)
    return Product(
        appId: 1, productId: "com.example.pro.monthly", referenceName: "Pro monthly", type: .autoRenewable,
        pricing: Pricing(tier: 5, customPrices: ["CHN": 2500]),
        localizations: [
            ProductLocalization(locale: "en_US", displayName: "Pro", description: "Everything, every month"),
            ProductLocalization(locale: "zh-Hans", displayName: "专业版", description: "每月全部功能"),
        ],
        familyShareable: true, subscription: SubscriptionMembership(groupId: 1, level: 1), duration: .oneMonth,
        introductoryOffers: [
            IntroductoryOffer(
                storefront: "USA",
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .week))),
            IntroductoryOffer(
                storefront: "CHN",
                schedule: OfferSchedule(
                    paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 3,
                    pricing: Pricing(tier: 1))),
        ],
        promotionalOffers: [
            PromotionalOffer(
                identifier: "winback_50", referenceName: "Win back",
                schedule: OfferSchedule(
                    paymentMode: .payUpFront, period: OfferPeriod(count: 3, unit: .month), pricing: Pricing(tier: 2))),
            PromotionalOffer(
                identifier: "free.month", referenceName: "Free month",
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .month))),
        ],
        winBackOffers: [
            WinBackOffer(
                identifier: "lapsed_half", referenceName: "Half price",
                schedule: OfferSchedule(
                    paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 2,
                    pricing: Pricing(tier: 2)),
                paidSubscriptionDurationInMonths: 3,
                timeSinceLastSubscribedInMonths: WinBackOffer.MonthRange(minimum: 1, maximum: 24),
                waitBetweenOffersInMonths: 6, startDate: epoch, endDate: epoch.addingTimeInterval(86_400))
        ],
        createdAt: epoch, updatedAt: epoch)
}

/// The codes of `errors`, in order.
private func codes(_ errors: [KioskError]) -> [String] { errors.map(\.code.rawValue) }

@Suite("Catalog validation")
struct CatalogValidationTests {
    // Proves a fully specified auto-renewable product with offers has no errors.
    @Test func validProductPasses() {
        #expect(CatalogValidator.validate(product: validSubscription()) == [])
    }

    // Proves well-formed reverse-DNS bundle ids are accepted.
    @Test(arguments: [
        "com.example", "com.example.my-app", "io.kiosk.App2", "a.b", String(repeating: "a.", count: 77) + "b",
    ])
    func bundleIdAccepted(_ bundleId: String) {
        #expect(CatalogValidator.validateBundleId(bundleId) == [])
    }

    // Proves malformed bundle ids are refused with the invalid_bundle_id code, the field and a fix.
    @Test(arguments: [
        "", "example", ".com.example", "com.example.", "com..example", "com.example.*", "com.1example", "com.ex_ample",
        "com.exämple", "com. example", String(repeating: "a.", count: 78) + "b",
    ])
    func bundleIdRefused(_ bundleId: String) throws {
        let errors = CatalogValidator.validateBundleId(bundleId, field: "apps[0].bundleId")
        let error = try #require(errors.first)
        #expect(errors.count == 1)
        #expect(error.code == .invalidBundleId && error.kind == .invalidInput)
        #expect(error.field == "apps[0].bundleId")
        #expect(error.fix?.contains("reverse-DNS") == true)
    }

    // Proves product ids of letters, digits, underscores and periods up to 100 characters are accepted.
    @Test(arguments: ["coins_100", "com.example.Coins.100", "1", String(repeating: "x", count: 100)])
    func productIdAccepted(_ productId: String) {
        #expect(CatalogValidator.validateProductId(productId) == [])
    }

    // Proves empty, too long and badly charactered product ids are refused.
    @Test(arguments: ["", String(repeating: "x", count: 101), "coins-100", "coins 100", "coins/100", "硬币"])
    func productIdRefused(_ productId: String) {
        #expect(codes(CatalogValidator.validateProductId(productId)) == ["invalid_product_id"])
    }

    // Proves reference names must have 1–64 characters and not be blank.
    @Test func referenceNames() {
        #expect(CatalogValidator.validateReferenceName("Coins") == [])
        #expect(CatalogValidator.validateReferenceName(String(repeating: "n", count: 64)) == [])
        #expect(codes(CatalogValidator.validateReferenceName("")) == ["invalid_reference_name"])
        #expect(codes(CatalogValidator.validateReferenceName("   ")) == ["invalid_reference_name"])
        #expect(
            codes(CatalogValidator.validateReferenceName(String(repeating: "n", count: 65))) == [
                "invalid_reference_name"
            ])
    }

    // Proves locale spellings with a hyphen, underscore, any case or a Chinese script normalize, and others do not.
    @Test(arguments: [
        ("en_US", "en_US"), ("en-US", "en_US"), ("EN-us", "en_US"), ("zh-Hans", "zh_CN"), ("zh_Hant", "zh_TW"),
        ("zh-HK", "zh_HK"), ("ca_ES", "ca_ES"), ("no-NO", "no_NO"),
    ])
    func localeNormalized(text: String, expected: String) {
        #expect(AppStoreLocale.normalized(text) == expected)
    }

    // Proves unknown or malformed locales are not App Store Connect locales.
    @Test(arguments: ["", "en", "en_XX", "xx_YY", "en_US_POSIX", "en__US", "klingon"])
    func localeRefused(text: String) {
        #expect(AppStoreLocale.normalized(text) == nil)
    }

    // Proves localization problems are each reported at their own path: locale, duplicates, name and description.
    @Test func localizationErrors() {
        let localizations = [
            ProductLocalization(locale: "en_US", displayName: "Coins", description: "A bag of coins"),
            ProductLocalization(locale: "en-us", displayName: "Coins", description: "Duplicate"),
            ProductLocalization(locale: "xx_XX", displayName: "", description: String(repeating: "d", count: 56)),
            ProductLocalization(locale: "ja_JP", displayName: String(repeating: "n", count: 36), description: "ok"),
        ]
        let errors = CatalogValidator.validateLocalizations(localizations, field: "p.localizations")
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "duplicate_locale@p.localizations[1].locale",
                "invalid_locale@p.localizations[2].locale",
                "invalid_display_name@p.localizations[2].displayName",
                "invalid_description@p.localizations[2].description",
                "invalid_display_name@p.localizations[3].displayName",
            ])
        #expect(errors[1].fix?.contains("zh_CN") == true)
        let limits = [
            ProductLocalization(
                locale: "fr_CA", displayName: String(repeating: "n", count: 35),
                description: String(repeating: "d", count: 55))
        ]
        #expect(CatalogValidator.validateLocalizations(limits) == [])
    }

    // Proves pricing errors: a tier outside 1...20, an unknown storefront and a non-positive custom amount.
    @Test func pricingErrors() {
        #expect(CatalogValidator.validatePricing(Pricing(tier: 20, customPrices: ["jpn": 100])) == [])
        let errors = CatalogValidator.validatePricing(
            Pricing(tier: 0, customPrices: ["XYZ": 100, "USA": 0, "CHN": -5]), field: "pricing")
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "invalid_price_tier@pricing.tier",
                "invalid_price_amount@pricing.customPrices.CHN",
                "invalid_price_amount@pricing.customPrices.USA",
                "unknown_storefront@pricing.customPrices.XYZ",
            ])
        #expect(codes(CatalogValidator.validatePricing(Pricing(tier: 21))) == ["invalid_price_tier"])
    }

    // Proves a custom price is capped at 10¹² minor units, so Apple's milliunits (×1000), a quantity and a refund
    // share stay inside Int64, and that proration of the largest prices cannot overflow either.
    @Test func pricesAreCappedAndProrationCannotOverflow() {
        #expect(CatalogValidator.validatePricing(Pricing(customPrices: ["USA": Pricing.maximumMinorUnits])) == [])
        for amount in [Pricing.maximumMinorUnits + 1, Int.max] {
            #expect(
                codes(CatalogValidator.validatePricing(Pricing(customPrices: ["USA": amount]))) == [
                    "invalid_price_amount"
                ])
        }
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let unused = SubscriptionProration.unusedMinorUnits(
            price: 10 * Pricing.maximumMinorUnits, periodStart: start, periodEnd: start + 400 * 86_400,
            now: start + 100 * 86_400)
        #expect(unused == 7_500_000_000_000)
    }

    // Proves an auto-renewable product needs a group, a level of at least 1 and a duration.
    @Test func autoRenewableNeedsGroupLevelAndDuration() {
        var product = validSubscription()
        product.subscription = nil
        product.duration = nil
        #expect(
            codes(CatalogValidator.validate(product: product)) == [
                "missing_subscription_group", "missing_duration",
            ])
        product = validSubscription()
        product.subscription?.level = 0
        let errors = CatalogValidator.validate(product: product, field: "products[3]")
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "invalid_subscription_level@products[3].subscription.level"
            ])
    }

    // Proves other types must not have a group, offers, a duration (unless non-renewing) or unsupported sharing.
    @Test(arguments: [ProductType.consumable, .nonConsumable, .nonRenewing])
    func otherTypesRefuseSubscriptionSettings(type: ProductType) {
        var product = validSubscription()
        product.type = type
        var expected = ["unexpected_subscription_group"]
        if type != .nonRenewing { expected.append("unexpected_duration") }
        if type != .nonConsumable { expected.append("family_sharing_not_supported") }
        expected.append("offers_require_auto_renewable")
        #expect(codes(CatalogValidator.validate(product: product)) == expected)
        product.subscription = nil
        product.duration = nil
        product.familyShareable = false
        product.introductoryOffers = []
        product.promotionalOffers = []
        #expect(codes(CatalogValidator.validate(product: product)) == ["offers_require_auto_renewable"])
        product.winBackOffers = []
        #expect(CatalogValidator.validate(product: product) == [])
    }

    // Proves offer periods and counts: free trials and pay-up-front take one period, pay-as-you-go 1–12.
    @Test(arguments: [
        (OfferPaymentMode.freeTrial, 1, true), (.freeTrial, 2, false), (.payUpFront, 1, true), (.payUpFront, 3, false),
        (.payAsYouGo, 1, true), (.payAsYouGo, 12, true), (.payAsYouGo, 13, false), (.payAsYouGo, 0, false),
    ])
    func offerPeriodCounts(mode: OfferPaymentMode, numberOfPeriods: Int, valid: Bool) {
        var product = validSubscription()
        product.introductoryOffers = [
            IntroductoryOffer(
                schedule: OfferSchedule(
                    paymentMode: mode, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: numberOfPeriods,
                    pricing: Pricing(tier: 1)))
        ]
        let errors = CatalogValidator.validate(product: product)
        #expect(codes(errors) == (valid ? [] : ["invalid_offer_periods"]))
        if !valid { #expect(errors.first?.field == "product.introductoryOffers[0].numberOfPeriods") }
    }

    // Proves a paid offer needs a price, a free trial does not, and out-of-range periods are refused.
    @Test func offerPricingAndPeriod() {
        var product = validSubscription()
        product.introductoryOffers = [
            IntroductoryOffer(
                storefront: "USA",
                schedule: OfferSchedule(paymentMode: .payUpFront, period: OfferPeriod(count: 3, unit: .month))),
            IntroductoryOffer(
                storefront: "JPN",
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 2, unit: .year))),
        ]
        product.promotionalOffers = [
            PromotionalOffer(
                identifier: "p", referenceName: "P",
                schedule: OfferSchedule(
                    paymentMode: .payAsYouGo, period: OfferPeriod(count: 1, unit: .month), numberOfPeriods: 2,
                    pricing: Pricing(tier: 99)))
        ]
        let errors = CatalogValidator.validate(product: product)
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "missing_offer_price@product.introductoryOffers[0].pricing",
                "invalid_offer_period@product.introductoryOffers[1].period",
                "invalid_price_tier@product.promotionalOffers[0].pricing.tier",
            ])
    }

    // Proves at most one introductory offer per storefront, an offer without storefront covering all of them.
    @Test func introductoryOfferPerStorefront() {
        let trial = { (storefront: String?) in
            IntroductoryOffer(
                storefront: storefront,
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 1, unit: .week)))
        }
        var product = validSubscription()
        product.introductoryOffers = [trial("USA"), trial("JPN"), trial("chn")]
        #expect(CatalogValidator.validate(product: product) == [])
        product.introductoryOffers = [trial("USA"), trial("usa"), trial("ATL")]
        #expect(
            codes(CatalogValidator.validate(product: product)) == [
                "duplicate_introductory_offer", "unknown_storefront",
            ])
        product.introductoryOffers = [trial("USA"), trial(nil)]
        #expect(codes(CatalogValidator.validate(product: product)) == ["duplicate_introductory_offer"])
        product.introductoryOffers = [trial(nil), trial("USA")]
        #expect(codes(CatalogValidator.validate(product: product)) == ["duplicate_introductory_offer"])
        product.introductoryOffers = [trial(nil), trial(nil)]
        #expect(codes(CatalogValidator.validate(product: product)) == ["duplicate_introductory_offer"])
    }

    // Proves promotional offer identifiers are unique within the product and follow the product-id rules.
    @Test func promotionalOfferIdentifiers() {
        var product = validSubscription()
        product.promotionalOffers.append(product.promotionalOffers[0])
        product.promotionalOffers.append(
            PromotionalOffer(
                identifier: "bad id", referenceName: "",
                schedule: OfferSchedule(paymentMode: .freeTrial, period: OfferPeriod(count: 3, unit: .day))))
        let errors = CatalogValidator.validate(product: product)
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "duplicate_offer_identifier@product.promotionalOffers[2].identifier",
                "invalid_product_id@product.promotionalOffers[3].identifier",
                "invalid_reference_name@product.promotionalOffers[3].referenceName",
            ])
        #expect(errors[1].message.contains("offer identifier"))
    }

    // Proves win-back offers: ids unique among promotional and win-back offers, offer terms, eligibility months of
    // 1–120 with a maximum not below the minimum (hostile numbers included), and an end after the start.
    @Test func winBackOfferRules() {
        var product = validSubscription()
        var offer = product.winBackOffers[0]
        offer.identifier = "winback_50"
        offer.numberOfPeriods = 13
        offer.paidSubscriptionDurationInMonths = 0
        offer.timeSinceLastSubscribedInMonths = WinBackOffer.MonthRange(minimum: 12, maximum: 2)
        offer.waitBetweenOffersInMonths = Int.max
        offer.endDate = offer.startDate
        product.winBackOffers.append(offer)
        product.winBackOffers.append(product.winBackOffers[0])
        let errors = CatalogValidator.validate(product: product)
        #expect(
            errors.map { "\($0.code)@\($0.field ?? "")" } == [
                "duplicate_offer_identifier@product.winBackOffers[1].identifier",
                "invalid_offer_periods@product.winBackOffers[1].numberOfPeriods",
                "invalid_win_back_months@product.winBackOffers[1].paidSubscriptionDurationInMonths",
                "invalid_win_back_months@product.winBackOffers[1].waitBetweenOffersInMonths",
                "invalid_win_back_months@product.winBackOffers[1].timeSinceLastSubscribedInMonths.maximum",
                "invalid_offer_dates@product.winBackOffers[1].endDate",
                "duplicate_offer_identifier@product.winBackOffers[2].identifier",
            ])
        #expect(errors[0].message.contains("promotionalOffers[0]"))
        #expect(errors.allSatisfy { $0.fix != nil })
    }

    // Proves require(_:) throws the first error and passes an empty list.
    @Test func requireThrowsFirst() throws {
        try CatalogValidator.require([])
        let error = #expect(throws: KioskError.self) {
            try CatalogValidator.require(
                CatalogValidator.validateBundleId("bad") + CatalogValidator.validateProductId(""))
        }
        #expect(error?.code == .invalidBundleId)
    }
}
