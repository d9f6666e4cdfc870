/// `SKProductsRequest`: which product identifiers the app wants.
public struct ProductsRequest: Codable, Sendable, Hashable {
    public var identifiers: [String]

    public init(identifiers: [String]) {
        self.identifiers = identifiers
    }
}

/// `SKProductsResponse`: the products on sale to this account, and every other identifier as invalid
/// (unknown, deleted, not approved, not priced in the storefront, no agreement…).
public struct ProductsResponse: Codable, Sendable, Hashable {
    public var products: [ProductInfo]
    public var invalidProductIdentifiers: [String]

    public init(products: [ProductInfo], invalidProductIdentifiers: [String]) {
        self.products = products
        self.invalidProductIdentifiers = invalidProductIdentifiers
    }
}

/// One product as sold in the account's storefront.
public struct ProductInfo: Codable, Sendable, Hashable {
    public var productId: String
    /// `consumable`, `non_consumable`, `auto_renewable` or `non_renewing`.
    public var type: String
    public var localizedTitle: String
    public var localizedDescription: String
    /// The locale the title and description are written in (the storefront's language, else a fallback).
    public var textLocale: String
    public var price: PriceInfo
    /// ISO 8601 duration (`P1M`) of a subscription's period.
    public var subscriptionPeriod: String?
    public var subscriptionGroupIdentifier: String?
    public var introductoryOffer: OfferInfo?
    public var promotionalOffers: [OfferInfo]
    /// Auto-renewables with win-back offers: each of them (`Product.SubscriptionInfo.winBackOffers`), whether or
    /// not the account may redeem it now; nil when there are none.
    public var winBackOffers: [OfferInfo]?
    public var isFamilyShareable: Bool
    /// Auto-renewables only: whether the signed-in account would get the introductory offer (it never subscribed
    /// in the group), as `Product.SubscriptionInfo.isEligibleForIntroOffer`.
    public var isEligibleForIntroOffer: Bool?
    /// Auto-renewables only: the billing plans on sale in the storefront (`Product.SubscriptionInfo.pricingTerms`),
    /// up front first, then a one-year subscription's monthly plan with a 12-month commitment.
    public var pricingTerms: [PricingTermsInfo]?

    public init(
        productId: String, type: String, localizedTitle: String, localizedDescription: String, textLocale: String,
        price: PriceInfo, subscriptionPeriod: String? = nil, subscriptionGroupIdentifier: String? = nil,
        introductoryOffer: OfferInfo? = nil, promotionalOffers: [OfferInfo] = [], winBackOffers: [OfferInfo]? = nil,
        isFamilyShareable: Bool = false, isEligibleForIntroOffer: Bool? = nil, pricingTerms: [PricingTermsInfo]? = nil
    ) {
        self.productId = productId
        self.type = type
        self.localizedTitle = localizedTitle
        self.localizedDescription = localizedDescription
        self.textLocale = textLocale
        self.price = price
        self.subscriptionPeriod = subscriptionPeriod
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.isFamilyShareable = isFamilyShareable
        self.isEligibleForIntroOffer = isEligibleForIntroOffer
        self.pricingTerms = pricingTerms
    }
}

/// One billing plan of an auto-renewable, as StoreKit's `Product.SubscriptionInfo.PricingTerms` describes it: what
/// each billing period charges and how long it is, and the commitment those periods make up.
public struct PricingTermsInfo: Codable, Sendable, Hashable {
    /// `BILLED_UPFRONT` or `MONTHLY`.
    public var billingPlanType: String
    /// What each billing period charges (`billingDisplayPrice`).
    public var billingPrice: PriceInfo
    /// ISO 8601 duration of a billing period (`P1M` for the monthly plan).
    public var billingPeriod: String
    /// The commitment's total (`commitmentInfo.price`): 12 monthly payments, or the period's price up front.
    public var commitmentPrice: PriceInfo
    /// ISO 8601 duration of the commitment (`commitmentInfo.period`, `P1Y` for the monthly plan).
    public var commitmentPeriod: String
    /// How many billing periods the commitment has (12 for the monthly plan, 1 up front).
    public var billingPeriodCount: Int

    public init(
        billingPlanType: String, billingPrice: PriceInfo, billingPeriod: String, commitmentPrice: PriceInfo,
        commitmentPeriod: String, billingPeriodCount: Int
    ) {
        self.billingPlanType = billingPlanType
        self.billingPrice = billingPrice
        self.billingPeriod = billingPeriod
        self.commitmentPrice = commitmentPrice
        self.commitmentPeriod = commitmentPeriod
        self.billingPeriodCount = billingPeriodCount
    }
}

/// A price in the storefront's currency. `minorUnits` is the exact amount; `decimal` the same as text
/// (`"0.99"`, `"120"` for yen), which clients turn into a `Decimal` without floating point.
public struct PriceInfo: Codable, Sendable, Hashable {
    public var minorUnits: Int
    public var decimal: String
    /// ISO 4217, e.g. `USD`.
    public var currency: String
    /// Storefront alpha-3, e.g. `USA`.
    public var storefront: String
    /// Locale identifier with the currency, e.g. `en_US@currency=USD` (`SKProduct.priceLocale`).
    public var locale: String

    public init(minorUnits: Int, decimal: String, currency: String, storefront: String, locale: String) {
        self.minorUnits = minorUnits
        self.decimal = decimal
        self.currency = currency
        self.storefront = storefront
        self.locale = locale
    }
}

/// `SKProductDiscount`: an introductory, promotional or win-back offer.
public struct OfferInfo: Codable, Sendable, Hashable {
    /// Nil for introductory offers; the offer id for promotional and win-back ones.
    public var identifier: String?
    /// `free_trial`, `pay_as_you_go` or `pay_up_front`.
    public var paymentMode: String
    /// ISO 8601 duration of one period, e.g. `P1W`.
    public var period: String
    public var numberOfPeriods: Int
    /// Nil for free trials.
    public var price: PriceInfo?

    public init(identifier: String?, paymentMode: String, period: String, numberOfPeriods: Int, price: PriceInfo?) {
        self.identifier = identifier
        self.paymentMode = paymentMode
        self.period = period
        self.numberOfPeriods = numberOfPeriods
        self.price = price
    }
}
