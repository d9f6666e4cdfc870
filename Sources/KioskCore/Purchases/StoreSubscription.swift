import Foundation

/// An auto-renewable subscription of one account to one subscription group: the state the renewal scheduler
/// drives. Its transactions (one per period) share `originalTransactionId`; upgrades, downgrades and
/// crossgrades inside the group keep it too.
///
/// `nextEventAt` is the durable job: when it is due on the environment's clock, one scheduler claims the row
/// (`FOR UPDATE SKIP LOCKED` on PostgreSQL), acts (renew, retry billing, end grace, expire), sets the next
/// `nextEventAt` and inserts the notifications it causes, all in one database transaction.
public struct StoreSubscription: Codable, Sendable, Hashable {
    /// Apple's subscription `status` (1…5), as stored.
    public enum State: String, Codable, Sendable, CaseIterable, Hashable {
        case active
        case expired
        case billingRetry = "billing_retry"
        case gracePeriod = "grace_period"
        case revoked

        /// Apple's `status` number.
        public var appleStatus: Int {
            switch self {
            case .active: 1
            case .expired: 2
            case .billingRetry: 3
            case .gracePeriod: 4
            case .revoked: 5
            }
        }
    }

    public var environment: StoreEnvironment
    public var originalTransactionId: Int64
    public var appId: App.ID
    public var accountId: UUID
    public var groupId: SubscriptionGroup.ID
    /// The product of the current (or last) period.
    public var productId: String
    /// The transaction of the current (or last) period.
    public var latestTransactionId: Int64
    /// The product the next renewal charges (differs from `productId` after a downgrade or crossgrade).
    public var autoRenewProductId: String
    public var autoRenewEnabled: Bool
    public var state: State
    /// End of the current period, extensions included.
    public var expiresAt: Date
    /// When the scheduler must act next; nil when nothing is scheduled (expired, revoked).
    public var nextEventAt: Date?
    /// Apple's `expirationIntent` (1 cancelled, 2 billing error, 3 no price-increase consent, 4 product
    /// unavailable, 5 other); set once expired.
    public var expirationIntent: Int?
    /// When billing retry began (the first failed renewal); nil when not retrying.
    public var billingRetryStartedAt: Date?
    /// End of the billing grace period, while in one.
    public var gracePeriodExpiresAt: Date?
    /// Apple's `priceIncreaseStatus`: nil no increase, 0 awaiting consent, 1 consented.
    public var priceIncreaseStatus: Int?
    /// What the next renewal charges, in minor units of the subscription's currency; nil = the catalog price.
    public var renewalPriceMinorUnits: Int?
    /// Renewals since the last (re)subscription: the sandbox stops renewing after 12.
    public var renewalCount: Int
    /// Sandbox test control: the next renewal attempt fails with a billing error.
    public var failNextRenewal: Bool
    /// The offer the next renewal continues, and how many of its periods remain after the current one.
    public var offer: AppliedOffer?
    public var offerPeriodsRemaining: Int
    /// The 12-month commitment the current (or last) period belongs to, when it is billed monthly: its period is
    /// the latest transaction's. Nil for periods billed up front.
    public var commitment: TransactionCommitment?
    /// The plan the renewal after the current commitment (or, billed up front, after the current period) bills
    /// under: Apple's `commitmentRenewalBillingPlanType`, or `renewalBillingPlanType` outside a commitment.
    public var renewalBillingPlan: BillingPlanType
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        environment: StoreEnvironment, originalTransactionId: Int64, appId: App.ID, accountId: UUID,
        groupId: SubscriptionGroup.ID, productId: String, latestTransactionId: Int64, autoRenewProductId: String,
        autoRenewEnabled: Bool = true, state: State = .active, expiresAt: Date, nextEventAt: Date?,
        expirationIntent: Int? = nil, billingRetryStartedAt: Date? = nil, gracePeriodExpiresAt: Date? = nil,
        priceIncreaseStatus: Int? = nil, renewalPriceMinorUnits: Int? = nil, renewalCount: Int = 0,
        failNextRenewal: Bool = false, offer: AppliedOffer? = nil, offerPeriodsRemaining: Int = 0,
        commitment: TransactionCommitment? = nil, renewalBillingPlan: BillingPlanType = .billedUpFront,
        createdAt: Date, updatedAt: Date
    ) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.appId = appId
        self.accountId = accountId
        self.groupId = groupId
        self.productId = productId
        self.latestTransactionId = latestTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewEnabled = autoRenewEnabled
        self.state = state
        self.expiresAt = expiresAt
        self.nextEventAt = nextEventAt
        self.expirationIntent = expirationIntent
        self.billingRetryStartedAt = billingRetryStartedAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.priceIncreaseStatus = priceIncreaseStatus
        self.renewalPriceMinorUnits = renewalPriceMinorUnits
        self.renewalCount = renewalCount
        self.failNextRenewal = failNextRenewal
        self.offer = offer
        self.offerPeriodsRemaining = offerPeriodsRemaining
        self.commitment = commitment
        self.renewalBillingPlan = renewalBillingPlan
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Whether the next renewal is the next billing period of the commitment in progress: the customer committed to
    /// it, so it bills the current product at the commitment's price whatever auto-renew, a pending change or a
    /// price increase say (Apple's "Managing the life cycle of monthly subscriptions with a 12-month commitment":
    /// cancelling cancels the commitment's renewal, not its remaining payments).
    public var continuesCommitment: Bool { commitment?.hasPeriodsLeft ?? false }

    /// The plan the next renewal bills under: the commitment's while periods of it remain, else
    /// ``renewalBillingPlan``.
    public var nextBillingPlan: BillingPlanType { continuesCommitment ? .monthly : renewalBillingPlan }

    /// The product the next renewal bills: the current one while the commitment continues, else the one the customer
    /// chose to renew into.
    public var nextRenewalProductId: String { continuesCommitment ? productId : autoRenewProductId }
}
