import Foundation

/// A payment an app added to the queue (or the test controls started), keyed by the client's idempotency key.
/// It ends in a transaction (`purchased`) or an error (`failed`), possibly after waiting (`deferred`,
/// `interrupted`).
public struct Payment: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var environment: StoreEnvironment
    public var accountId: UUID
    public var appId: App.ID
    /// Unique per account and app; nil for payments the client did not start (test controls).
    public var idempotencyKey: String?
    public var productId: String
    public var quantity: Int
    public var applicationUsername: String?
    public var appAccountToken: UUID?
    public var state: PaymentState
    /// Set when `purchased`: the charge, or the existing purchase of an owned non-consumable.
    public var transactionId: Int64?
    /// `SKError.Code` raw value and Kiosk's code, set when `failed`.
    public var errorCode: Int?
    public var errorReason: ErrorCode?
    public var createdAt: Date
    public var updatedAt: Date
    /// The subscription billing plan the payment named (StoreKit's `billingPlanType` purchase option); nil when it
    /// named none (billed up front).
    public var billingPlan: BillingPlanType?

    public init(
        id: UUID, environment: StoreEnvironment, accountId: UUID, appId: App.ID, idempotencyKey: String?,
        productId: String, quantity: Int, applicationUsername: String?, appAccountToken: UUID?, state: PaymentState,
        transactionId: Int64? = nil, errorCode: Int? = nil, errorReason: ErrorCode? = nil, createdAt: Date,
        updatedAt: Date, billingPlan: BillingPlanType? = nil
    ) {
        self.id = id
        self.environment = environment
        self.accountId = accountId
        self.appId = appId
        self.idempotencyKey = idempotencyKey
        self.productId = productId
        self.quantity = quantity
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.state = state
        self.transactionId = transactionId
        self.errorCode = errorCode
        self.errorReason = errorReason
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.billingPlan = billingPlan
    }
}

/// Where a payment stands.
public enum PaymentState: String, Codable, Sendable, CaseIterable, Hashable {
    /// Charged (or already owned); `transactionId` is set.
    case purchased
    /// Not charged; `errorCode` says why. Final.
    case failed
    /// Waiting for Ask to Buy approval.
    case deferred
    /// Failed as interrupted, waiting to be resolved (then `purchased`).
    case interrupted
}
