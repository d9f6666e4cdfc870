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
    /// The billing plan of the next billing period: `MONTHLY` while the commitment has periods left, else the plan the
    /// next renewal bills under.
    public var renewalBillingPlanType: String?
    /// Present while the subscription is in a 12-month commitment: what happens when it ends.
    public var commitmentInfo: RenewalCommitmentInfo?

    public init(
        expirationIntent: Int? = nil, originalTransactionId: String, autoRenewProductId: String, productId: String,
        autoRenewStatus: Int, isInBillingRetryPeriod: Bool? = nil, priceIncreaseStatus: Int? = nil,
        gracePeriodExpiresDate: Int64? = nil, offerType: Int? = nil, offerIdentifier: String? = nil,
        signedDate: Int64, environment: String, recentSubscriptionStartDate: Int64? = nil, renewalDate: Int64? = nil,
        currency: String? = nil, renewalPrice: Int64? = nil, offerDiscountType: String? = nil,
        eligibleWinBackOfferIds: [String]? = nil, appAccountToken: String? = nil, appTransactionId: String? = nil,
        offerPeriod: String? = nil, renewalBillingPlanType: String? = nil, commitmentInfo: RenewalCommitmentInfo? = nil
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
        self.renewalBillingPlanType = renewalBillingPlanType
        self.commitmentInfo = commitmentInfo
    }
}

/// Apple's `RenewalCommitmentInfo`: the customer's renewal preferences for after the current 12-month commitment.
public struct RenewalCommitmentInfo: Codable, Sendable, Hashable {
    /// The product the commitment renews into.
    public var commitmentAutoRenewProductId: String
    /// 1 when the commitment renews at its end, 0 when the customer cancelled it (the remaining monthly payments are
    /// still billed).
    public var commitmentAutoRenewStatus: Int
    /// The plan the commitment renews under: `MONTHLY` (another commitment) or `BILLED_UPFRONT`.
    public var commitmentRenewalBillingPlanType: String
    /// When the commitment renews (its end), in milliseconds since 1970.
    public var commitmentRenewalDate: Int64
    /// What the renewal's first charge costs, in milliunits: a monthly payment, or the year up front.
    public var commitmentRenewalPrice: Int64?

    public init(
        commitmentAutoRenewProductId: String, commitmentAutoRenewStatus: Int, commitmentRenewalBillingPlanType: String,
        commitmentRenewalDate: Int64, commitmentRenewalPrice: Int64?
    ) {
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}
