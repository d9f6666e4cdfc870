import Foundation

/// One movement of money, recorded in the database transaction of the event that caused it and never changed
/// afterwards: a purchase, a renewal, a refund (negative units and amounts) or a refund taken back. Reports add
/// these up; a transaction's events add up to what it is worth now.
public struct MoneyEvent: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case purchase
        case renewal
        case refund
        case refundReversal = "refund_reversal"
    }

    public var environment: StoreEnvironment
    public var transactionId: Int64
    /// The transaction's revision the event came with; with the environment and transaction id, the key that makes
    /// recording one event twice impossible.
    public var revision: Int64
    public var kind: Kind
    public var occurredAt: Date
    public var appId: App.ID
    public var accountId: UUID
    public var originalTransactionId: Int64
    public var productId: String
    public var productType: ProductType
    /// The customer's storefront (ISO 3166-1 alpha-3) and the currency of every amount.
    public var storefront: String
    public var currency: String
    /// Units sold: the quantity, negative for a refund.
    public var units: Int
    public var amounts: Proceeds
    /// How an auto-renewable's sale was billed: a payment of the monthly plan covers one month of its 12-month
    /// commitment, an up-front one the product's whole period; nil for other products and for events recorded before
    /// billing plans.
    public var billingPlan: BillingPlanType?

    public init(
        environment: StoreEnvironment, transactionId: Int64, revision: Int64, kind: Kind, occurredAt: Date,
        appId: App.ID, accountId: UUID, originalTransactionId: Int64, productId: String, productType: ProductType,
        storefront: String, currency: String, units: Int, amounts: Proceeds, billingPlan: BillingPlanType? = nil
    ) {
        self.environment = environment
        self.transactionId = transactionId
        self.revision = revision
        self.kind = kind
        self.occurredAt = occurredAt
        self.appId = appId
        self.accountId = accountId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productType = productType
        self.storefront = storefront
        self.currency = currency
        self.units = units
        self.amounts = amounts
        self.billingPlan = billingPlan
    }
}
