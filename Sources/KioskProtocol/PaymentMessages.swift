import Foundation

/// `SKPayment` as sent to the store. The client makes `idempotencyKey` once per `add(payment)` and keeps it
/// with the payment on the device, so a retry after a crash or a lost answer charges once.
public struct PaymentRequest: Codable, Sendable, Hashable {
    public var productId: String
    /// 1–10 for consumables; 1 for everything else.
    public var quantity: Int
    /// Opaque per-user string, at most 255 characters (`SKMutablePayment.applicationUsername`).
    public var applicationUsername: String?
    /// The merchant's UUID for the user (`Product.PurchaseOption.appAccountToken`).
    public var appAccountToken: UUID?
    /// Unique per payment; 1–128 characters.
    public var idempotencyKey: String
    /// `SKMutablePayment.simulatesAskToBuyInSandbox`: defer this payment for approval (sandbox only).
    public var simulatesAskToBuyInSandbox: Bool?
    /// `SKMutablePayment.paymentDiscount` / `Product.PurchaseOption.promotionalOffer`: a promotional offer the
    /// merchant's server signed for this purchase.
    public var paymentDiscount: PaymentDiscount?
    /// `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`: a promotional offer and the compact JWS the
    /// merchant's server signed for it (Apple's `PromotionalOfferV2SignatureCreator`).
    public var promotionalOfferJWS: PromotionalOfferJWS?
    /// `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`: the merchant's signed decision whether
    /// the customer may have the product's introductory offer (Apple's
    /// `IntroductoryOfferEligibilitySignatureCreator`), which the store follows instead of its own.
    public var introductoryOfferEligibilityJWS: String?
    /// A one-time offer code the customer redeems with this purchase (an auto-renewable of the code's product).
    public var offerCode: String?
    /// `Product.PurchaseOption.winBackOffer`: the identifier of a win-back offer of the product the customer is
    /// eligible for (no signature: the store checks Apple's eligibility rules).
    public var winBackOfferId: String?
    /// `Product.PurchaseOption.billingPlanType`: the plan to buy a subscription under, `BILLED_UPFRONT` (the default)
    /// or `MONTHLY`, a one-year subscription's monthly plan with a 12-month commitment.
    public var billingPlanType: String?

    public init(
        productId: String, quantity: Int = 1, applicationUsername: String? = nil, appAccountToken: UUID? = nil,
        idempotencyKey: String, simulatesAskToBuyInSandbox: Bool? = nil, paymentDiscount: PaymentDiscount? = nil,
        promotionalOfferJWS: PromotionalOfferJWS? = nil, introductoryOfferEligibilityJWS: String? = nil,
        offerCode: String? = nil, winBackOfferId: String? = nil, billingPlanType: String? = nil
    ) {
        self.productId = productId
        self.quantity = quantity
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.idempotencyKey = idempotencyKey
        self.simulatesAskToBuyInSandbox = simulatesAskToBuyInSandbox
        self.paymentDiscount = paymentDiscount
        self.promotionalOfferJWS = promotionalOfferJWS
        self.introductoryOfferEligibilityJWS = introductoryOfferEligibilityJWS
        self.offerCode = offerCode
        self.winBackOfferId = winBackOfferId
        self.billingPlanType = billingPlanType
    }
}

/// A promotional offer named by its identifier and signed as a compact JWS (StoreKit's
/// `promotionalOffer(_ offerID:compactJWS:)`).
public struct PromotionalOfferJWS: Codable, Sendable, Hashable {
    /// The promotional offer's identifier in the product; the signature's `offerIdentifier` must be the same.
    public var offerId: String
    public var compactJWS: String

    public init(offerId: String, compactJWS: String) {
        self.offerId = offerId
        self.compactJWS = compactJWS
    }
}

/// `SKPaymentDiscount`: a promotional offer and the merchant's signature over it (Apple's scheme: ECDSA P-256
/// SHA-256, DER, base64, over `bundleId⁣keyIdentifier⁣productId⁣identifier⁣applicationUsername⁣nonce⁣timestamp`
/// joined by U+2063, signed with an In-App Purchase key of the app).
public struct PaymentDiscount: Codable, Sendable, Hashable {
    /// The promotional offer's identifier in the product.
    public var identifier: String
    /// The id of the In-App Purchase key that signed.
    public var keyIdentifier: String
    /// Used once: the store refuses a nonce it has seen.
    public var nonce: UUID
    /// Base64 of the DER ECDSA signature.
    public var signature: String
    /// When the merchant signed, in milliseconds since 1970; valid for 24 hours.
    public var timestamp: Int64

    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: Int64) {
        self.identifier = identifier
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.signature = signature
        self.timestamp = timestamp
    }
}

/// `restoreCompletedTransactions(withApplicationUsername:)`.
public struct RestoreRequest: Codable, Sendable, Hashable {
    public var applicationUsername: String?

    public init(applicationUsername: String? = nil) {
        self.applicationUsername = applicationUsername
    }
}

/// What a queue entry tells the client. Raw values are `SKPaymentTransactionState` names, plus `promoted`.
public enum QueueEntryState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Charged; the app delivers, then finishes.
    case purchased
    /// Not charged; `error` says why. The app finishes it too.
    case failed
    /// Waiting for a parent's approval (Ask to Buy); a later entry of the same payment brings the outcome.
    /// Nothing to finish.
    case deferred
    /// A restorable purchase replayed by `restore`; `transaction.originalTransactionId` is the first purchase.
    case restored
    /// A purchase started outside the app (a promoted in-app purchase): the client asks its delegate
    /// `shouldAddStorePayment`, then finishes the entry whatever the answer.
    case promoted
    /// The transaction was refunded or revoked: `transaction` is the transaction as it is now, with its
    /// `revocationDate`; the app withdraws the content. Finished from the start. (A reversed refund comes back
    /// as a `purchased` entry.)
    case revoked
}

/// One entry of an account's payment queue for one app: a state change the client must see.
///
/// `sequence` orders every entry of the environment and is the cursor of the updates stream. Entries in
/// `purchased`, `failed`, `restored` and `promoted` stay unfinished (and come back at every sync) until the client
/// finishes them.
public struct QueueEntry: Codable, Sendable, Hashable {
    public var sequence: Int64
    public var state: QueueEntryState
    /// The payment this entry belongs to (nil for restored entries).
    public var paymentId: UUID?
    /// The idempotency key the client sent with the payment (nil for purchases it did not start).
    public var idempotencyKey: String?
    public var productId: String
    public var quantity: Int
    public var applicationUsername: String?
    public var appAccountToken: UUID?
    /// Present for `purchased` and `restored`.
    public var transaction: TransactionInfo?
    /// Present for `failed`.
    public var error: StoreKitErrorInfo?
    /// When the entry was made, in milliseconds since 1970.
    public var date: Int64
    /// Set once the client finished the entry; `deferred` entries are finished from the start (the outcome comes
    /// later as another entry of the same payment).
    public var finished: Bool

    public init(
        sequence: Int64, state: QueueEntryState, paymentId: UUID?, idempotencyKey: String?, productId: String,
        quantity: Int, applicationUsername: String?, appAccountToken: UUID?, transaction: TransactionInfo?,
        error: StoreKitErrorInfo?, date: Int64, finished: Bool
    ) {
        self.sequence = sequence
        self.state = state
        self.paymentId = paymentId
        self.idempotencyKey = idempotencyKey
        self.productId = productId
        self.quantity = quantity
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.transaction = transaction
        self.error = error
        self.date = date
        self.finished = finished
    }
}

/// A charged transaction as the client sees it, with its signed forms.
public struct TransactionInfo: Codable, Sendable, Hashable {
    /// `SKPaymentTransaction.transactionIdentifier`. For a restored entry, a new identifier of the restore.
    public var transactionId: String
    /// The first purchase this transaction continues or restores.
    public var originalTransactionId: String
    /// Milliseconds since 1970.
    public var purchaseDate: Int64
    public var originalPurchaseDate: Int64
    /// Compact JWS in Apple's `JWSTransactionDecodedPayload` shape, signed by the environment's chain.
    public var signedTransaction: String
    /// The iOS 6-style `transactionReceipt`, base64.
    public var transactionReceipt: String

    public init(
        transactionId: String, originalTransactionId: String, purchaseDate: Int64, originalPurchaseDate: Int64,
        signedTransaction: String, transactionReceipt: String
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.signedTransaction = signedTransaction
        self.transactionReceipt = transactionReceipt
    }
}

/// Why a payment failed, in StoreKit's terms.
public struct StoreKitErrorInfo: Codable, Sendable, Hashable {
    /// `SKError.Code` raw value (`SKErrorDomain`).
    public var skErrorCode: Int
    /// Kiosk's stable code, e.g. `payment_declined`.
    public var code: String
    public var message: String

    public init(skErrorCode: Int, code: String, message: String) {
        self.skErrorCode = skErrorCode
        self.code = code
        self.message = message
    }
}

/// A list of queue entries and the newest sequence the store had when it answered (resume updates after it).
public struct QueueSnapshot: Codable, Sendable, Hashable {
    public var entries: [QueueEntry]
    public var cursor: Int64

    public init(entries: [QueueEntry], cursor: Int64) {
        self.entries = entries
        self.cursor = cursor
    }
}

/// A freshly signed app receipt.
public struct ReceiptResponse: Codable, Sendable, Hashable {
    /// Base64 of the PKCS #7 DER, exactly what `appStoreReceiptURL` holds on an Apple device.
    public var receipt: String

    public init(receipt: String) {
        self.receipt = receipt
    }
}

/// What the account owns in the app now: non-consumables, non-renewing subscriptions and auto-renewable
/// subscriptions not expired, none revoked (`Transaction.currentEntitlements`).
public struct EntitlementsResponse: Codable, Sendable, Hashable {
    public var transactions: [TransactionInfo]

    public init(transactions: [TransactionInfo]) {
        self.transactions = transactions
    }
}

/// The error body of every client-protocol failure: `{"error": {…}}`.
public struct ErrorResponse: Codable, Sendable, Hashable {
    public struct Body: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
        public var field: String?
        public var fix: String?
        /// The `SKError.Code` an app sees for this failure, when there is one.
        public var skErrorCode: Int?
        public var requestId: String?
    }

    public var error: Body
}
