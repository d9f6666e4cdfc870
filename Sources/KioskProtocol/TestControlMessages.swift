import Foundation

// The sandbox test controls (SKTestSession's powers), at ``TestControlRoutes``, admin token.
//
// - `POST /apps/{bundleId}/purchases` `TestPurchaseRequest` → `QueueEntry`
// - `GET /apps/{bundleId}/payments?tester=EMAIL&state=deferred|interrupted` → `TestPaymentsResponse`
// - `POST /apps/{bundleId}/payments/{paymentId}/approve|decline|resolve` → `QueueEntry`
// - `GET /apps/{bundleId}/transactions?tester=EMAIL` → `TestTransactionsResponse`
// - `DELETE /apps/{bundleId}/transactions?tester=EMAIL` → `TestDeletedResponse` (clear)
// - `DELETE /apps/{bundleId}/transactions/{transactionId}` → `TestDeletedResponse`
// - `PUT /apps/{bundleId}/failures` `TestFailureRequest` → `TestFailureResponse`; `GET` lists them
// - `GET /apps/{bundleId}/receipt?tester=EMAIL` → `ReceiptResponse`

/// Buys a product for a tester as if started outside the app. `promoted: true` makes it a promoted purchase
/// the app's delegate is asked about (`shouldAddStorePayment`), instead of a charged transaction.
public struct TestPurchaseRequest: Codable, Sendable, Hashable {
    public var tester: String
    public var productId: String
    public var quantity: Int?
    public var promoted: Bool?
    /// A one-time offer code redeemed with the purchase.
    public var offerCode: String?
    /// Charges once however often the same key is sent for the tester and app (a form sent twice, a retry); the
    /// repeats answer the first purchase's latest queue entry.
    public var idempotencyKey: String?
    /// The app's UUID for its user (StoreKit 2's `appAccountToken` purchase option), carried in the transaction.
    public var appAccountToken: UUID?
    /// A win-back offer of the product the tester is eligible for (StoreKit 2's `winBackOffer` purchase option).
    public var winBackOfferId: String?
    /// A promotional offer with the merchant's signature (`SKPaymentDiscount`); the signed application username is
    /// `appAccountToken`.
    public var paymentDiscount: PaymentDiscount?
    /// The subscription billing plan to buy under: `BILLED_UPFRONT` (the default) or `MONTHLY` (a one-year
    /// subscription's monthly plan with a 12-month commitment), as StoreKit's `billingPlanType` purchase option.
    public var billingPlanType: String?

    public init(
        tester: String, productId: String, quantity: Int? = nil, promoted: Bool? = nil, offerCode: String? = nil,
        idempotencyKey: String? = nil, appAccountToken: UUID? = nil, winBackOfferId: String? = nil,
        paymentDiscount: PaymentDiscount? = nil, billingPlanType: String? = nil
    ) {
        self.tester = tester
        self.productId = productId
        self.quantity = quantity
        self.promoted = promoted
        self.offerCode = offerCode
        self.idempotencyKey = idempotencyKey
        self.appAccountToken = appAccountToken
        self.winBackOfferId = winBackOfferId
        self.paymentDiscount = paymentDiscount
        self.billingPlanType = billingPlanType
    }
}

/// Makes the next `count` calls of one client API fail with `error` (an `SKError.Code` name).
public struct TestFailureRequest: Codable, Sendable, Hashable {
    /// `products`, `purchase`, `restore`, `receipt` or `verifyReceipt`.
    public var api: String
    /// 0 clears.
    public var count: Int
    /// `SKError.Code` name, e.g. `cloudServiceNetworkConnectionFailed`.
    public var error: String

    public init(api: String, count: Int, error: String) {
        self.api = api
        self.count = count
        self.error = error
    }
}

/// The failures armed for one app.
public struct TestFailureResponse: Codable, Sendable, Hashable {
    public var failures: [TestFailureRequest]

    public init(failures: [TestFailureRequest]) {
        self.failures = failures
    }
}

/// A payment the test controls can act on.
public struct TestPaymentInfo: Codable, Sendable, Hashable {
    public var paymentId: UUID
    public var tester: String
    public var productId: String
    public var quantity: Int
    /// `deferred`, `interrupted`, `purchased`, `failed`.
    public var state: String
    public var transactionId: String?
    public var createdDate: Int64

    public init(
        paymentId: UUID, tester: String, productId: String, quantity: Int, state: String, transactionId: String?,
        createdDate: Int64
    ) {
        self.paymentId = paymentId
        self.tester = tester
        self.productId = productId
        self.quantity = quantity
        self.state = state
        self.transactionId = transactionId
        self.createdDate = createdDate
    }
}

public struct TestPaymentsResponse: Codable, Sendable, Hashable {
    public var payments: [TestPaymentInfo]

    public init(payments: [TestPaymentInfo]) {
        self.payments = payments
    }
}

/// A tester's transaction as the test controls list it.
public struct TestTransactionInfo: Codable, Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var tester: String
    public var productId: String
    public var quantity: Int
    public var purchaseDate: Int64
    /// Integer minor units of `currency`. Not the JWS's `price`, which is in milli-units (×1000 of the currency's
    /// unit); ``priceMinorUnits`` says the same under a name that says so.
    public var price: Int
    /// The same as ``price``, named for its unit (absent from older stores).
    public var priceMinorUnits: Int?
    public var currency: String
    public var storefront: String
    /// False while an unfinished queue entry still shows it to the app.
    public var finished: Bool
    public var signedTransaction: String

    public init(
        transactionId: String, originalTransactionId: String, tester: String, productId: String, quantity: Int,
        purchaseDate: Int64, price: Int, currency: String, storefront: String, finished: Bool, signedTransaction: String
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.tester = tester
        self.productId = productId
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.price = price
        self.priceMinorUnits = price
        self.currency = currency
        self.storefront = storefront
        self.finished = finished
        self.signedTransaction = signedTransaction
    }
}

public struct TestTransactionsResponse: Codable, Sendable, Hashable {
    public var transactions: [TestTransactionInfo]

    public init(transactions: [TestTransactionInfo]) {
        self.transactions = transactions
    }
}

public struct TestDeletedResponse: Codable, Sendable, Hashable {
    public var deleted: Int

    public init(deleted: Int) {
        self.deleted = deleted
    }
}

/// A parent or guardian withdraws consent for a (child) tester's use of the app (Apple's Declared Age Range
/// consent): the app's server gets `RESCIND_CONSENT`.
public struct TestConsentRequest: Codable, Sendable, Hashable {
    public var tester: String

    public init(tester: String) {
        self.tester = tester
    }
}

/// What withdrawing consent did.
public struct TestConsentResponse: Codable, Sendable, Hashable {
    public var tester: String
    /// The tester's `appTransactionId` in the app, which the notification's signed app transaction carries.
    public var appTransactionId: String
    /// False when consent had already been withdrawn: nothing was sent again, and `notification` is the first one.
    public var rescinded: Bool
    public var notification: TestNotificationInfo

    public init(tester: String, appTransactionId: String, rescinded: Bool, notification: TestNotificationInfo) {
        self.tester = tester
        self.appTransactionId = appTransactionId
        self.rescinded = rescinded
        self.notification = notification
    }
}
