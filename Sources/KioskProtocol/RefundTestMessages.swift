import Foundation
import KioskCore

// The sandbox test controls for refunds, revocations and notifications, at
// ``TestControlRoutes/transactionAction``, admin token.
// Each is idempotent: repeating one answers the same and sends no second notification.
//
// - `POST /transactions/{transactionId}/refund` `RefundRequest` → `TestRevocationResponse` (REFUND)
// - `POST /transactions/{transactionId}/decline-refund` → `TestRevocationResponse` (REFUND_DECLINED)
// - `POST /transactions/{transactionId}/reverse-refund` → `TestRevocationResponse` (REFUND_REVERSED)
// - `POST /transactions/{transactionId}/revoke` → `TestRevocationResponse` (REVOKE, Family Sharing removed)
// - `POST /transactions/{transactionId}/request-refund` `TestRefundRequestRequest` → `TestRevocationResponse`
//   (CONSUMPTION_REQUEST)
// - `POST /notifications/{uuid}/resend` → `TestNotificationInfo` (the same payload again, signed now)
// - `GET /notifications?environment=sandbox|production` → `TestNotificationsResponse`

/// Refunds a transaction: in full, or `percentage` (1–100) of its price. The sandbox test controls and the store
/// operator's production refunds take the same body.
public struct RefundRequest: Codable, Sendable, Hashable {
    /// Apple's `revocationReason`: 0 (other, the default) or 1 (an issue in the app).
    public var reason: Int?
    /// Prorated refund: the share of the price refunded, in percent. Nil refunds in full.
    public var percentage: Int?

    public init(reason: Int? = nil, percentage: Int? = nil) {
        self.reason = reason
        self.percentage = percentage
    }
}

/// A customer asks for a refund of a consumable or auto-renewable: the app's server gets CONSUMPTION_REQUEST.
public struct TestRefundRequestRequest: Codable, Sendable, Hashable {
    /// Apple's `consumptionRequestReason`: `UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`,
    /// `UNSATISFIED_WITH_PURCHASE`, `LEGAL` or `OTHER` (the default).
    public var reason: String?

    public init(reason: String? = nil) {
        self.reason = reason
    }
}

/// A transaction after a refund or revocation control, and the notification it caused.
public struct TestRevocationResponse: Codable, Sendable, Hashable {
    public var transactionId: String
    public var productId: String
    /// Milliseconds since 1970; nil when not revoked (or no longer).
    public var revocationDate: Int64?
    public var revocationReason: Int?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public var revocationType: RevocationType?
    /// What was refunded, in integer minor units of ``currency``.
    public var refundedMinorUnits: Int
    /// The ISO 4217 code of the transaction's price and of ``refundedMinorUnits``; absent from older stores.
    public var currency: String?
    /// The transaction's JWS as it is now.
    public var signedTransaction: String
    /// The notification made (or, for a repeated control, made the first time).
    public var notificationType: NotificationType
    public var notificationUUID: String
    /// How the notification's delivery stood when the store answered: `pending` (queued, sent right after),
    /// `delivered`, `failed`, or `unconfigured` (the app has no notification URL for the environment: nothing is
    /// sent). Absent from older stores.
    public var notificationState: String?
    /// Delivery attempts made when the store answered (0 for `unconfigured`, and for one just queued).
    public var notificationAttempts: Int?

    public init(
        transactionId: String, productId: String, revocationDate: Int64?, revocationReason: Int?,
        revocationType: RevocationType?, refundedMinorUnits: Int, currency: String? = nil, signedTransaction: String,
        notificationType: NotificationType,
        notificationUUID: String, notificationState: String? = nil, notificationAttempts: Int? = nil
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.refundedMinorUnits = refundedMinorUnits
        self.currency = currency
        self.signedTransaction = signedTransaction
        self.notificationType = notificationType
        self.notificationUUID = notificationUUID
        self.notificationState = notificationState
        self.notificationAttempts = notificationAttempts
    }
}

/// One server notification and how its delivery stands.
public struct TestNotificationInfo: Codable, Sendable, Hashable {
    public var notificationUUID: String
    public var environment: String
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    public var transactionId: String?
    /// `pending`, `delivered`, `failed` or `unconfigured`.
    public var state: String
    /// How many POSTs were made, all URLs, retries and replays counted.
    public var attempts: Int
    /// Milliseconds since 1970, on the environment's clock.
    public var nextAttemptDate: Int64?
    public var createdDate: Int64

    public init(
        notificationUUID: String, environment: String, notificationType: NotificationType,
        subtype: NotificationSubtype?,
        transactionId: String?, state: String, attempts: Int, nextAttemptDate: Int64?, createdDate: Int64
    ) {
        self.notificationUUID = notificationUUID
        self.environment = environment
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionId = transactionId
        self.state = state
        self.attempts = attempts
        self.nextAttemptDate = nextAttemptDate
        self.createdDate = createdDate
    }
}

/// An app's latest notifications in one environment, newest first.
public struct TestNotificationsResponse: Codable, Sendable, Hashable {
    public var notifications: [TestNotificationInfo]

    public init(notifications: [TestNotificationInfo]) {
        self.notifications = notifications
    }
}

/// What the app's server sent with Send Consumption Information for a sandbox transaction:
/// `GET /apps/{bundleId}/transactions/{transactionId}/consumption` (404 `no_consumption_report` before it did).
public struct TestConsumptionReport: Codable, Sendable, Hashable {
    public var transactionId: String
    /// 1 (`/inApps/v1/transactions/consumption`) or 2 (`/inApps/v2/…`).
    public var apiVersion: Int
    /// The request body as the store received it (JSON text).
    public var body: String
    /// Milliseconds since 1970, on the sandbox clock.
    public var receivedDate: Int64

    public init(transactionId: String, apiVersion: Int, body: String, receivedDate: Int64) {
        self.transactionId = transactionId
        self.apiVersion = apiVersion
        self.body = body
        self.receivedDate = receivedDate
    }
}
