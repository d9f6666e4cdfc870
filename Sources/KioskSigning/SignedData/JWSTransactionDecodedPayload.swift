import KioskCore

/// The payload of a signed transaction, in Apple's `JWSTransactionDecodedPayload` shape and JSON types: ids as
/// strings, dates as integer milliseconds since 1970, `price` in milliunits of `currency`. Absent values are
/// omitted, as Apple omits them.
public struct JWSTransactionDecodedPayload: Codable, Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var webOrderLineItemId: String?
    public var bundleId: String
    public var productId: String
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Int64
    public var originalPurchaseDate: Int64
    public var expiresDate: Int64?
    public var quantity: Int
    /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
    public var type: String
    public var appAccountToken: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String
    public var signedDate: Int64
    public var revocationReason: Int?
    public var revocationDate: Int64?
    public var isUpgraded: Bool?
    public var offerType: Int?
    public var offerIdentifier: String?
    /// `Production` or `Sandbox`.
    public var environment: String
    /// ISO 3166-1 alpha-3.
    public var storefront: String
    public var storefrontId: String
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String
    public var currency: String
    /// Milliunits: 990 with `USD` is $0.99.
    public var price: Int64
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var appTransactionId: String?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public var revocationType: RevocationType?
    /// Milliunits of a percent refunded (100000 = 100 %).
    public var revocationPercentage: Int?
    /// An auto-renewable's billing plan: `BILLED_UPFRONT`, or `MONTHLY` for a billing period of a 12-month
    /// commitment.
    public var billingPlanType: String?
    /// A `MONTHLY` transaction's place in its commitment.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// Kiosk's one addition to Apple's shape: how many times the store signed this transaction (1 when made, one
    /// more per change). Of two states of one transaction the higher revision is the newer, whatever their
    /// `signedDate`s. Absent from Apple's data; Apple's decoders ignore it.
    public var kioskRevision: Int64?

    public init(
        transactionId: String, originalTransactionId: String, webOrderLineItemId: String? = nil, bundleId: String,
        productId: String, subscriptionGroupIdentifier: String? = nil, purchaseDate: Int64,
        originalPurchaseDate: Int64, expiresDate: Int64? = nil, quantity: Int, type: String,
        appAccountToken: String? = nil, inAppOwnershipType: String = "PURCHASED", signedDate: Int64,
        revocationReason: Int? = nil, revocationDate: Int64? = nil, isUpgraded: Bool? = nil, offerType: Int? = nil,
        offerIdentifier: String? = nil, environment: String, storefront: String, storefrontId: String,
        transactionReason: String = "PURCHASE", currency: String, price: Int64, offerDiscountType: String? = nil,
        offerPeriod: String? = nil, appTransactionId: String? = nil, revocationType: RevocationType? = nil,
        revocationPercentage: Int? = nil, billingPlanType: String? = nil,
        commitmentInfo: TransactionCommitmentInfo? = nil, kioskRevision: Int64? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.appTransactionId = appTransactionId
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
        self.kioskRevision = kioskRevision
    }
}

/// Apple's `TransactionCommitmentInfo`: where a billing period of a monthly plan stands in its 12-month commitment.
public struct TransactionCommitmentInfo: Codable, Sendable, Hashable {
    /// This billing period's number, 1 to `totalBillingPeriods`.
    public var billingPeriodNumber: Int
    /// When the commitment ends, in milliseconds since 1970.
    public var commitmentExpiresDate: Int64
    /// The commitment's total price in milliunits of the transaction's currency.
    public var commitmentPrice: Int64
    /// The commitment's billing periods (12).
    public var totalBillingPeriods: Int

    public init(
        billingPeriodNumber: Int, commitmentExpiresDate: Int64, commitmentPrice: Int64, totalBillingPeriods: Int
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }
}
