import Foundation
import KioskProtocol

/// A request to buy a product, as in StoreKit: make one from an ``SKProduct`` and add it to the ``SKPaymentQueue``.
///
/// ```swift
/// let payment = SKMutablePayment(product: coins)
/// payment.quantity = 3
/// SKPaymentQueue.default().add(payment)
/// ```
///
/// The queue copies a payment's values when it is added; changing a mutable payment afterwards has no effect.
public class SKPayment: @unchecked Sendable, CustomStringConvertible {
    /// The product's identifier.
    public internal(set) var productIdentifier: String
    /// How many to buy: 1–10 for consumables, 1 otherwise.
    public internal(set) var quantity: Int
    /// An opaque per-user string (at most 255 characters); Apple advises a hash of the app's account id.
    public internal(set) var applicationUsername: String?
    /// Sandbox only: defer the payment as Ask to Buy does, until the test controls approve or decline it.
    public internal(set) var simulatesAskToBuyInSandbox: Bool
    /// A promotional offer your server signed for this payment.
    public internal(set) var paymentDiscount: SKPaymentDiscount?
    /// Set for the payment of a promoted purchase, so adding it again charges once.
    let idempotencyKey: String?

    /// A payment for one unit of `product`.
    public convenience init(product: SKProduct) {
        self.init(productIdentifier: product.productIdentifier)
    }

    init(
        productIdentifier: String, quantity: Int = 1, applicationUsername: String? = nil,
        simulatesAskToBuyInSandbox: Bool = false, paymentDiscount: SKPaymentDiscount? = nil,
        idempotencyKey: String? = nil
    ) {
        self.productIdentifier = productIdentifier
        self.quantity = quantity
        self.applicationUsername = applicationUsername
        self.simulatesAskToBuyInSandbox = simulatesAskToBuyInSandbox
        self.paymentDiscount = paymentDiscount
        self.idempotencyKey = idempotencyKey
    }

    /// The payment as stored in a queue entry.
    convenience init(_ request: PaymentRequest) {
        self.init(
            productIdentifier: request.productId, quantity: request.quantity,
            applicationUsername: request.applicationUsername,
            simulatesAskToBuyInSandbox: request.simulatesAskToBuyInSandbox ?? false,
            paymentDiscount: request.paymentDiscount.map(SKPaymentDiscount.init))
    }

    public var description: String { "SKPayment(\(productIdentifier) × \(quantity))" }
}

/// A payment whose fields the app sets before adding it to the queue.
public final class SKMutablePayment: SKPayment, @unchecked Sendable {
    /// An empty payment; set ``productIdentifier`` before adding it.
    public convenience init() {
        self.init(productIdentifier: "")
    }

    override public var productIdentifier: String {
        get { super.productIdentifier }
        set { super.productIdentifier = newValue }
    }

    override public var quantity: Int {
        get { super.quantity }
        set { super.quantity = newValue }
    }

    override public var applicationUsername: String? {
        get { super.applicationUsername }
        set { super.applicationUsername = newValue }
    }

    override public var simulatesAskToBuyInSandbox: Bool {
        get { super.simulatesAskToBuyInSandbox }
        set { super.simulatesAskToBuyInSandbox = newValue }
    }

    override public var paymentDiscount: SKPaymentDiscount? {
        get { super.paymentDiscount }
        set { super.paymentDiscount = newValue }
    }
}

/// A promotional offer and the signature your server made for it with an In-App Purchase key, as StoreKit's
/// `SKPaymentDiscount`: ECDSA P-256 SHA-256 over `bundleId⁣keyIdentifier⁣productId⁣identifier⁣applicationUsername⁣
/// nonce⁣timestamp` (U+2063 between, username and nonce lower-cased), valid for 24 hours, each nonce once.
public final class SKPaymentDiscount: @unchecked Sendable {
    /// The promotional offer's identifier.
    public let identifier: String
    /// The In-App Purchase key that signed.
    public let keyIdentifier: String
    public let nonce: UUID
    /// Base64 of the DER signature.
    public let signature: String
    /// Milliseconds since 1970, when your server signed.
    public let timestamp: NSNumber

    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber) {
        self.identifier = identifier
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.signature = signature
        self.timestamp = timestamp
    }

    convenience init(_ discount: PaymentDiscount) {
        self.init(
            identifier: discount.identifier, keyIdentifier: discount.keyIdentifier, nonce: discount.nonce,
            signature: discount.signature, timestamp: NSNumber(value: discount.timestamp))
    }

    /// The discount as the payment request carries it.
    var request: PaymentDiscount {
        PaymentDiscount(
            identifier: identifier, keyIdentifier: keyIdentifier, nonce: nonce, signature: signature,
            timestamp: timestamp.int64Value)
    }
}
