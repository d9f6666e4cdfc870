/// The payload of a signed renewal info, in Apple's `JWSRenewalInfoDecodedPayload` shape and JSON types: ids as
/// strings, dates as integer milliseconds, `renewalPrice` in milliunits. Absent values are omitted.
public struct JWSRenewalInfoDecodedPayload: Codable, Sendable, Hashable {
    /// 1 cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    public var originalTransactionId: String
    public var autoRenewProductId: String
    public var productId: String
    /// 0 off, 1 on.
    public var autoRenewStatus: Int
    public var isInBillingRetryPeriod: Bool?
    /// 0 not responded, 1 consented.
    public var priceIncreaseStatus: Int?
    public var gracePeriodExpiresDate: Int64?
    public var offerType: Int?
    public var offerIdentifier: String?
    public var signedDate: Int64
    /// `Production` or `Sandbox`.
    public var environment: String
    public var recentSubscriptionStartDate: Int64?
    public var renewalDate: Int64?
    public var currency: String?
    public var renewalPrice: Int64?
    public var offerDiscountType: String?
    /// The win-back offers an expired subscription's customer may redeem, best first.
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var offerPeriod: String?

    public init(
        expirationIntent: Int? = nil, originalTransactionId: String, autoRenewProductId: String, productId: String,
        autoRenewStatus: Int, isInBillingRetryPeriod: Bool? = nil, priceIncreaseStatus: Int? = nil,
        gracePeriodExpiresDate: Int64? = nil, offerType: Int? = nil, offerIdentifier: String? = nil,
        signedDate: Int64, environment: String, recentSubscriptionStartDate: Int64? = nil, renewalDate: Int64? = nil,
        currency: String? = nil, renewalPrice: Int64? = nil, offerDiscountType: String? = nil,
        eligibleWinBackOfferIds: [String]? = nil, appAccountToken: String? = nil, appTransactionId: String? = nil,
        offerPeriod: String? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
    }
}
