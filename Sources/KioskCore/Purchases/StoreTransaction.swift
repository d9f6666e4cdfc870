import Foundation

/// A charge the store recorded: the durable fact behind every `purchased`. Signed when created and again when it
/// changes; the JWS is stored with it, and the iOS 6-style receipt too, except a renewal's, made when asked for.
public struct StoreTransaction: Codable, Sendable, Hashable, Identifiable {
    /// Apple-style numeric transaction id, unique per environment and never reused.
    public var id: Int64
    public var environment: StoreEnvironment
    public var appId: App.ID
    public var accountId: UUID
    public var productId: String
    public var productType: ProductType
    /// The first purchase of this product this transaction continues (itself for one-time purchases).
    public var originalTransactionId: Int64
    public var purchaseDate: Date
    public var originalPurchaseDate: Date
    public var quantity: Int
    /// What was charged for all of `quantity`, in integer minor units of `currency`.
    public var priceMinorUnits: Int
    public var currency: String
    /// Storefront alpha-3 code.
    public var storefront: String
    public var storefrontId: Int
    public var applicationUsername: String?
    public var appAccountToken: UUID?
    /// The customer's invoice number (Apple's order id), e.g. `MK5TTTVWJH`.
    public var orderId: String
    public var subscriptionGroupId: Int64?
    public var webOrderLineItemId: Int64?
    public var expiresDate: Date?
    public var revocationDate: Date?
    public var revocationReason: Int?
    /// Apple's `revocationType`: `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public var revocationType: RevocationType?
    /// `PURCHASE`, or `RENEWAL` for a subscription period the store renewed.
    public var transactionReason: TransactionReason
    /// The customer upgraded to a higher level of the group during this period, which ended then.
    public var isUpgraded: Bool
    /// The offer this period was bought or renewed with, if any.
    public var offer: AppliedOffer?
    /// A billing period of the monthly plan: where it stands in its 12-month commitment (Apple's `commitmentInfo`);
    /// nil for everything billed up front.
    public var commitment: TransactionCommitment?
    /// What was paid back for this transaction (refunds, the unused time of an upgraded period), in minor units
    /// of `currency`; never more than `priceMinorUnits`.
    public var refundedMinorUnits: Int
    /// When anything about the transaction last changed (creation, refund, extension…); the App Store Server API
    /// sorts and pages history by it.
    public var modifiedAt: Date
    /// How many times the transaction was signed: 1 when made, one more for each change signed since (a refund, a
    /// reversal, an extension…). Signed as `kioskRevision`, so a receiver can order two signed states of one
    /// transaction even when the clock gave them the same `signedDate` (a frozen sandbox clock, one millisecond).
    public var revision: Int64
    /// Compact JWS in Apple's `JWSTransactionDecodedPayload` shape. (Its iOS 6-style receipt is not kept: the
    /// store signs one when a device or `verifyReceipt` asks for it, `StoreLedger.receipt(of:bundleId:signing:)`.)
    public var signedTransaction: String

    public init(
        id: Int64, environment: StoreEnvironment, appId: App.ID, accountId: UUID, productId: String,
        productType: ProductType, originalTransactionId: Int64, purchaseDate: Date, originalPurchaseDate: Date,
        quantity: Int, priceMinorUnits: Int, currency: String, storefront: String, storefrontId: Int,
        applicationUsername: String?, appAccountToken: UUID?, orderId: String, subscriptionGroupId: Int64? = nil,
        webOrderLineItemId: Int64? = nil, expiresDate: Date? = nil, revocationDate: Date? = nil,
        revocationReason: Int? = nil, revocationType: RevocationType? = nil,
        transactionReason: TransactionReason = .purchase,
        isUpgraded: Bool = false, offer: AppliedOffer? = nil, commitment: TransactionCommitment? = nil,
        refundedMinorUnits: Int = 0, modifiedAt: Date? = nil,
        revision: Int64 = 0, signedTransaction: String
    ) {
        self.id = id
        self.environment = environment
        self.appId = appId
        self.accountId = accountId
        self.productId = productId
        self.productType = productType
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.quantity = quantity
        self.priceMinorUnits = priceMinorUnits
        self.currency = currency
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.orderId = orderId
        self.subscriptionGroupId = subscriptionGroupId
        self.webOrderLineItemId = webOrderLineItemId
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.transactionReason = transactionReason
        self.isUpgraded = isUpgraded
        self.offer = offer
        self.commitment = commitment
        self.refundedMinorUnits = refundedMinorUnits
        self.modifiedAt = modifiedAt ?? purchaseDate
        self.revision = revision
        self.signedTransaction = signedTransaction
    }
}

/// Why a transaction exists: Apple's `transactionReason`.
public enum TransactionReason: String, Codable, Sendable, CaseIterable, Hashable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}

/// Apple's `offerType`. `retention` (5) is a retention offer the App Store showed a subscriber about to cancel
/// (Apple, WWDC26 "Explore Retention Messaging in App Store Connect"); Apple's client libraries keep it as a raw value.
public enum OfferType: Int, Codable, Sendable, CaseIterable, Hashable {
    case introductory = 1, promotional, offerCode, winBack, retention
}

/// The offer a subscription period was charged with.
public struct AppliedOffer: Codable, Sendable, Hashable {
    public var type: OfferType
    /// The promotional offer's identifier or the offer code's reference; nil for introductory offers.
    public var identifier: String?
    public var paymentMode: OfferPaymentMode
    /// One period of the offer, ISO 8601 (`P1M`): Apple's `offerPeriod`; nil for an offer on a one-time purchase
    /// (an in-app purchase's offer code), which has one price and no period.
    public var period: String?

    public init(type: OfferType, identifier: String? = nil, paymentMode: OfferPaymentMode, period: String?) {
        self.type = type
        self.identifier = identifier
        self.paymentMode = paymentMode
        self.period = period
    }

    /// Apple's `offerDiscountType`: the payment mode's name (`PAY_AS_YOU_GO`), or `ONE_TIME` for an offer on a
    /// one-time purchase.
    public var discountType: String { period == nil ? "ONE_TIME" : paymentMode.appleName }
}

/// One entry of an account's payment queue for one app (see `KioskProtocol.QueueEntry` for the wire form).
/// `sequence` comes from `IdentifierSequence.queueEntry`, taken in the transaction that inserts the entry.
public struct QueueRecord: Codable, Sendable, Hashable {
    public enum State: String, Codable, Sendable, CaseIterable, Hashable {
        case purchased, failed, deferred, restored, promoted
        /// The transaction was refunded or revoked; born finished (nothing to finish).
        case revoked
    }

    public var sequence: Int64
    public var environment: StoreEnvironment
    public var accountId: UUID
    public var appId: App.ID
    public var state: State
    public var paymentId: UUID?
    public var productId: String
    public var quantity: Int
    /// The transaction shown (`purchased`), or restored (`restored`: the original purchase).
    public var transactionId: Int64?
    /// For `restored`: the new identifier the client sees for this restore.
    public var restoreTransactionId: Int64?
    public var errorCode: Int?
    public var errorReason: ErrorCode?
    public var createdAt: Date
    /// Nil until the client finishes the entry; `deferred` entries are born finished (nothing to finish).
    public var finishedAt: Date?

    public init(
        sequence: Int64, environment: StoreEnvironment, accountId: UUID, appId: App.ID, state: State, paymentId: UUID?,
        productId: String, quantity: Int, transactionId: Int64? = nil, restoreTransactionId: Int64? = nil,
        errorCode: Int? = nil, errorReason: ErrorCode? = nil, createdAt: Date, finishedAt: Date? = nil
    ) {
        self.sequence = sequence
        self.environment = environment
        self.accountId = accountId
        self.appId = appId
        self.state = state
        self.paymentId = paymentId
        self.productId = productId
        self.quantity = quantity
        self.transactionId = transactionId
        self.restoreTransactionId = restoreTransactionId
        self.errorCode = errorCode
        self.errorReason = errorReason
        self.createdAt = createdAt
        self.finishedAt = finishedAt
    }
}

/// A failure the sandbox test controls armed: the next `remaining` calls of `api` in one app fail with
/// `errorCode` (`SKError.Code` raw value).
public struct ArmedFailure: Codable, Sendable, Hashable {
    public enum API: String, Codable, Sendable, CaseIterable, Hashable {
        case products, purchase, restore, receipt
        /// The sandbox's `verifyReceipt`; `errorCode` is the `status` to answer (21005, 21009 or 21100–21199).
        case verifyReceipt
    }

    public var appId: App.ID
    public var api: API
    public var remaining: Int
    public var errorCode: Int

    public init(appId: App.ID, api: API, remaining: Int, errorCode: Int) {
        self.appId = appId
        self.api = api
        self.remaining = remaining
        self.errorCode = errorCode
    }
}

extension StoreTransaction {
    /// Apple's `billingPlanType` of an auto-renewable's transaction: monthly inside a commitment, else up front; nil
    /// for other products.
    public var billingPlanType: BillingPlanType? {
        guard productType == .autoRenewable else { return nil }
        return commitment == nil ? .billedUpFront : .monthly
    }

    /// `Transaction.currentEntitlements`: of `transactions` (one account's, in one app and environment, in the order
    /// they were made), the latest of each non-consumable, non-renewing and unexpired auto-renewable purchase, none
    /// revoked; by transaction id.
    public static func currentEntitlements(among transactions: [StoreTransaction], at now: Date) -> [StoreTransaction] {
        var latestByOriginal: [Int64: StoreTransaction] = [:]
        for transaction in transactions.sorted(by: { $0.id < $1.id }) where transaction.productType != .consumable {
            latestByOriginal[transaction.originalTransactionId] = transaction
        }
        return latestByOriginal.values.filter { transaction in
            transaction.revocationDate == nil && (transaction.expiresDate.map { $0 > now } ?? true)
        }
        .sorted { $0.id < $1.id }
    }
}
