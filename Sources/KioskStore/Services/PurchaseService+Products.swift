import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

extension PurchaseService {
    /// At most this many identifiers per products request.
    static let maximumIdentifiers = 200

    /// `SKProductsRequest`: every identifier comes back as a product on sale to this account or as invalid,
    /// never as an error (`SKProductsResponse.invalidProductIdentifiers`).
    public func products(_ request: ProductsRequest, for client: ClientSession) async throws -> ProductsResponse {
        guard request.identifiers.count <= Self.maximumIdentifiers else {
            throw KioskError(
                .tooManyIdentifiers,
                "A products request may name at most \(Self.maximumIdentifiers) identifiers; it named "
                    + "\(request.identifiers.count).",
                field: "identifiers", fix: "Split the request.")
        }
        var seen = Set<String>()
        let identifiers = request.identifiers.filter { seen.insert($0).inserted }
        try await failIfArmed(.products, client: client)
        // Only reads: beside the writer, so a products request does not wait for purchases and renewals to commit.
        let (products, agreement, eligibleGroups) = try await database.read { tx in
            var products: [String: Product] = [:]
            var eligibleGroups: Set<SubscriptionGroup.ID> = []
            for identifier in identifiers {
                let product = try await tx.product(appId: client.app.id, productId: identifier)
                products[identifier] = product
                if let group = product?.subscription?.groupId,
                    try await isEligibleForIntroOffer(group: group, client: client, in: tx)
                {
                    eligibleGroups.insert(group)
                }
            }
            return (products, try await CatalogService.agreement(in: tx), eligibleGroups)
        }
        var valid: [ProductInfo] = []
        var invalid: [String] = []
        for identifier in identifiers {
            guard let product = products[identifier],
                ProductAvailability.evaluate(
                    product: product, app: client.app, agreement: agreement, environment: client.environment,
                    storefront: client.storefront
                ).isAvailable,
                var info = Self.productInfo(product, storefront: client.storefront)
            else {
                invalid.append(identifier)
                continue
            }
            info.isEligibleForIntroOffer = product.subscription.map { eligibleGroups.contains($0.groupId) }
            valid.append(info)
        }
        return ProductsResponse(products: valid, invalidProductIdentifiers: invalid)
    }

    /// The product as the storefront sells it; nil when it has no price there.
    static func productInfo(_ product: Product, storefront: Storefront) -> ProductInfo? {
        guard let price = product.pricing.price(in: storefront),
            let text = localization(of: product, locale: storefront.defaultLocale)
        else { return nil }
        let introductory =
            product.introductoryOffers.first { $0.storefront == storefront.code }
            ?? product.introductoryOffers.first { $0.storefront == nil }
        return ProductInfo(
            productId: product.productId, type: product.type.rawValue, localizedTitle: text.displayName,
            localizedDescription: text.description, textLocale: text.locale,
            price: priceInfo(minorUnits: price, storefront: storefront),
            subscriptionPeriod: product.duration?.rawValue,
            subscriptionGroupIdentifier: product.subscription.map { String($0.groupId) },
            introductoryOffer: introductory.map {
                OfferInfo(
                    identifier: nil, paymentMode: $0.paymentMode.rawValue, period: $0.period.iso8601,
                    numberOfPeriods: $0.numberOfPeriods,
                    price: offerPrice($0.paymentMode, $0.pricing, storefront: storefront))
            },
            promotionalOffers: product.promotionalOffers.map {
                offerInfo($0.identifier, $0.paymentMode, $0.period, $0.numberOfPeriods, $0.pricing, storefront)
            },
            winBackOffers: product.winBackOffers.isEmpty
                ? nil
                : product.winBackOffers.map {
                    offerInfo($0.identifier, $0.paymentMode, $0.period, $0.numberOfPeriods, $0.pricing, storefront)
                },
            isFamilyShareable: product.familyShareable,
            pricingTerms: pricingTerms(of: product, price: price, storefront: storefront))
    }

    /// An auto-renewable's billing plans in `storefront` (StoreKit's `pricingTerms`): up front at `price` for its
    /// period, and a one-year subscription's monthly plan where it has a price there (Apple's "Supporting monthly
    /// subscriptions with a 12-month commitment": 12 monthly payments).
    static func pricingTerms(of product: Product, price: Int, storefront: Storefront) -> [PricingTermsInfo]? {
        guard product.type == .autoRenewable, let duration = product.duration else { return nil }
        let upFront = priceInfo(minorUnits: price, storefront: storefront)
        var terms = [
            PricingTermsInfo(
                billingPlanType: BillingPlanType.billedUpFront.rawValue, billingPrice: upFront,
                billingPeriod: duration.rawValue, commitmentPrice: upFront, commitmentPeriod: duration.rawValue,
                billingPeriodCount: 1)
        ]
        if let monthly = product.monthlyPlanPrice(in: storefront) {
            terms.append(
                PricingTermsInfo(
                    billingPlanType: BillingPlanType.monthly.rawValue,
                    billingPrice: priceInfo(minorUnits: monthly, storefront: storefront),
                    billingPeriod: MonthlyPlan.billingPeriod.rawValue,
                    commitmentPrice: priceInfo(
                        minorUnits: monthly.saturatingMultiplied(by: MonthlyPlan.billingPeriods), storefront: storefront
                    ),
                    commitmentPeriod: MonthlyPlan.commitmentDuration.rawValue,
                    billingPeriodCount: MonthlyPlan.billingPeriods))
        }
        return terms
    }

    static func priceInfo(minorUnits: Int, storefront: Storefront) -> PriceInfo {
        PriceInfo(
            minorUnits: minorUnits, decimal: storefront.currency.decimalString(minorUnits: minorUnits),
            currency: storefront.currency.code, storefront: storefront.code, locale: priceLocale(storefront))
    }

    /// A promotional or win-back offer as clients see it.
    private static func offerInfo(
        _ identifier: String, _ mode: OfferPaymentMode, _ period: OfferPeriod, _ periods: Int, _ pricing: Pricing,
        _ storefront: Storefront
    ) -> OfferInfo {
        OfferInfo(
            identifier: identifier, paymentMode: mode.rawValue, period: period.iso8601, numberOfPeriods: periods,
            price: offerPrice(mode, pricing, storefront: storefront))
    }

    private static func offerPrice(_ mode: OfferPaymentMode, _ pricing: Pricing, storefront: Storefront) -> PriceInfo? {
        guard mode != .freeTrial, let price = pricing.price(in: storefront) else { return nil }
        return priceInfo(minorUnits: price, storefront: storefront)
    }

    /// The texts for `locale`: the exact locale, else the same language, else US English, else the first one.
    static func localization(of product: Product, locale: String) -> ProductLocalization? {
        let language = locale.split(separator: "_").first.map(String.init)
        return product.localizations.first { $0.locale == locale }
            ?? product.localizations.first { $0.locale.split(separator: "_").first.map(String.init) == language }
            ?? product.localizations.first { $0.locale == "en_US" }
            ?? product.localizations.first
    }

    /// Throws the failure the test controls armed for `api` in this app, using up one call of it. Whether one is
    /// armed is read beside the writer (nearly always none is); the use is committed on its own, so the failure it
    /// causes cannot roll it back.
    func failIfArmed(_ api: ArmedFailure.API, client: ClientSession) async throws {
        guard client.environment == .sandbox,
            try await database.read({ tx in
                try await tx.armedFailures(appId: client.app.id).contains { $0.api == api }
            })
        else { return }
        let code = try await database.transaction { tx in
            try await tx.consumeArmedFailure(appId: client.app.id, api: api)
        }
        if let code { throw Self.injectedFailure(api, code: code) }
    }

    static func injectedFailure(_ api: ArmedFailure.API, code: Int) -> KioskError {
        let name = StoreKitErrorCode(rawValue: code)?.name ?? "code \(code)"
        return KioskError(
            .injectedFailure, "The sandbox test controls made this \(api.rawValue) call fail with SKError.\(name).",
            fix: "Disarm it with `kiosk test fail-next --app BUNDLE_ID --api \(api.rawValue) --count 0`.",
            storeKitCode: code)
    }
}
