import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// An order as stored.
struct OrderRecord: Sendable {
    var id: String
    var bundleId: String
    var userId: String
    var productId: String
    var quantity: Int
    var appAccountToken: UUID
    var state: String
    var transactionId: String?
    var createdAt: Date

    init(row: any SQLRow) throws {
        id = try row.decode(column: "id", as: String.self)
        bundleId = try row.decode(column: "bundle_id", as: String.self)
        userId = try row.decode(column: "user_id", as: String.self)
        productId = try row.decode(column: "product_id", as: String.self)
        quantity = Int(try row.decode(column: "quantity", as: Int64.self))
        appAccountToken = try row.uuid("app_account_token")
        state = try row.decode(column: "state", as: String.self)
        transactionId = try row.optional("transaction_id", as: String.self)
        createdAt = try row.date("created_at")
    }

    init(
        id: String, bundleId: String, userId: String, productId: String, quantity: Int, appAccountToken: UUID,
        createdAt: Date
    ) {
        self.id = id
        self.bundleId = bundleId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.state = "open"
        self.transactionId = nil
        self.createdAt = createdAt
    }
}

/// A grant as stored: one transaction, given once to one user.
struct GrantRecord: Sendable {
    var environment: StoreEnvironment
    var transactionId: String
    var originalTransactionId: String
    var bundleId: String
    var userId: String
    var orderId: String?
    var productId: String
    var productKind: MerchantConfiguration.ProductKind
    var quantity: Int
    var entitlement: String?
    var balanceName: String?
    /// What the grant credits to `balanceName` while it stands (amount per unit × quantity).
    var balanceAmount: Int64
    var purchaseDate: Date
    var expiresDate: Date?
    var revokedDate: Date?
    var revocationReason: String?
    var stateSignedDate: Date
    var stateRevision: Int64?
    /// Standing again after a revocation was undone.
    var reinstated: Bool
    /// How many times the state changed since the grant; every update is conditional on it.
    var stateChanges: Int64
    var source: String
    var grantedAt: Date

    var isRevoked: Bool { revokedDate != nil }

    /// What an arriving state is compared with.
    var state: LedgerState {
        LedgerState(revision: stateRevision, signedDate: stateSignedDate, isRevoked: isRevoked, reinstated: reinstated)
    }

    init(row: any SQLRow) throws {
        environment = try row.enumeration("environment", as: StoreEnvironment.self)
        transactionId = try row.decode(column: "transaction_id", as: String.self)
        originalTransactionId = try row.decode(column: "original_transaction_id", as: String.self)
        bundleId = try row.decode(column: "bundle_id", as: String.self)
        userId = try row.decode(column: "user_id", as: String.self)
        orderId = try row.optional("order_id", as: String.self)
        productId = try row.decode(column: "product_id", as: String.self)
        productKind = try row.enumeration("product_kind", as: MerchantConfiguration.ProductKind.self)
        quantity = Int(try row.decode(column: "quantity", as: Int64.self))
        entitlement = try row.optional("entitlement", as: String.self)
        balanceName = try row.optional("balance_name", as: String.self)
        balanceAmount = try row.decode(column: "balance_amount", as: Int64.self)
        purchaseDate = try row.date("purchase_date")
        expiresDate = try row.optionalDate("expires_date")
        revokedDate = try row.optionalDate("revoked_date")
        revocationReason = try row.optional("revocation_reason", as: String.self)
        stateSignedDate = try row.date("state_signed_date")
        stateRevision = try row.optional("state_revision", as: Int64.self)
        reinstated = try row.decode(column: "reinstated", as: Bool.self)
        stateChanges = try row.decode(column: "state_changes", as: Int64.self)
        source = try row.decode(column: "source", as: String.self)
        grantedAt = try row.date("granted_at")
    }

    init(
        facts: PurchaseFacts, userId: String, orderId: String?, product: MerchantConfiguration.ProductSettings,
        source: String, grantedAt: Date
    ) {
        environment = facts.environment
        transactionId = facts.transactionId
        originalTransactionId = facts.originalTransactionId
        bundleId = facts.bundleId
        self.userId = userId
        self.orderId = orderId
        productId = facts.productId
        productKind = product.type
        quantity = facts.quantity
        entitlement = product.entitlement
        balanceName = product.type == .consumable ? product.balance : nil
        balanceAmount =
            product.type == .consumable ? (product.amount ?? 0).saturatingMultiplied(by: Int64(facts.quantity)) : 0
        purchaseDate = facts.purchaseDate
        expiresDate = facts.expiresDate
        revokedDate = facts.revocationDate
        revocationReason = facts.revocationReason
        stateSignedDate = facts.signedDate
        stateRevision = facts.revision
        reinstated = false
        stateChanges = 0
        self.source = source
        self.grantedAt = grantedAt
    }
}

/// A purchase the merchant learnt of before it could tie it to a user, with the newest state it was told.
struct UnclaimedRecord: Sendable {
    var revokedDate: Date?
    var revocationReason: String?
    var expiresDate: Date?
    var state: LedgerState
    var stateChanges: Int64

    init(row: any SQLRow) throws {
        revokedDate = try row.optionalDate("revoked_date")
        revocationReason = try row.optional("revocation_reason", as: String.self)
        expiresDate = try row.optionalDate("expires_date")
        state = LedgerState(
            revision: try row.optional("state_revision", as: Int64.self), signedDate: try row.date("state_signed_date"),
            isRevoked: revokedDate != nil, reinstated: try row.decode(column: "reinstated", as: Bool.self))
        stateChanges = try row.decode(column: "state_changes", as: Int64.self)
    }
}

/// The latest renewal info of one subscription.
struct RenewalState: Sendable {
    var environment: StoreEnvironment
    var originalTransactionId: String
    var autoRenewStatus: Int
    var autoRenewProductId: String
    var expirationIntent: Int?
    var gracePeriodExpiresDate: Date?
    var signedDate: Date

    init(
        environment: StoreEnvironment, originalTransactionId: String, autoRenewStatus: Int, autoRenewProductId: String,
        expirationIntent: Int?, gracePeriodExpiresDate: Date?, signedDate: Date
    ) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.signedDate = signedDate
    }

    init(row: any SQLRow) throws {
        environment = try row.enumeration("environment", as: StoreEnvironment.self)
        originalTransactionId = try row.decode(column: "original_transaction_id", as: String.self)
        autoRenewStatus = Int(try row.decode(column: "auto_renew_status", as: Int64.self))
        autoRenewProductId = try row.decode(column: "auto_renew_product_id", as: String.self)
        expirationIntent = try row.optional("expiration_intent", as: Int64.self).map(Int.init)
        gracePeriodExpiresDate = try row.optionalDate("grace_period_expires_date")
        signedDate = try row.date("signed_date")
    }
}

/// One ledger event as stored.
struct LedgerEvent: Sendable {
    /// The kind of the event a `RESCIND_CONSENT` notification records; `transactionId` is the app transaction.
    static let consentRescinded = "consent_rescinded"

    var at: Date
    var environment: StoreEnvironment
    var transactionId: String
    var productId: String
    var kind: String
    var source: String
    var detail: String

    init(row: any SQLRow) throws {
        at = try row.date("at")
        environment = try row.enumeration("environment", as: StoreEnvironment.self)
        transactionId = try row.decode(column: "transaction_id", as: String.self)
        productId = try row.decode(column: "product_id", as: String.self)
        kind = try row.decode(column: "kind", as: String.self)
        source = try row.decode(column: "source", as: String.self)
        detail = try row.decode(column: "detail", as: String.self)
    }
}

/// One balance of a user: what the standing grants credit, what was spent, and how many purchases stand or were
/// refunded.
struct BalanceSummary: Sendable {
    var name: String
    var credited: Int64
    var spent: Int64
    var standing: Int64
    var revoked: Int64

    /// What is left: negative when a purchase was refunded after its coins were spent.
    var amount: Int64 { credited - spent }
}

/// One spend from a balance as stored.
struct SpendRecord: Sendable {
    var userId: String
    var name: String
    var amount: Int64
    var idempotencyKey: String
    var reason: String?
    var spentAt: Date

    init(row: any SQLRow) throws {
        userId = try row.decode(column: "user_id", as: String.self)
        name = try row.decode(column: "name", as: String.self)
        amount = try row.decode(column: "amount", as: Int64.self)
        idempotencyKey = try row.decode(column: "idempotency_key", as: String.self)
        reason = try row.optional("reason", as: String.self)
        spentAt = try row.date("spent_at")
    }
}
