import Foundation

// The App Store Server API's answers, with Apple's type and field names: the store encodes them and the merchant
// (or any Swift client) decodes them. Dates are Apple's milliseconds since 1970.

/// `GET /inApps/v1/transactions/{transactionId}`.
public struct TransactionInfoResponse: Codable, Sendable, Hashable {
    public var signedTransactionInfo: String

    public init(signedTransactionInfo: String) { self.signedTransactionInfo = signedTransactionInfo }
}

/// `GET /inApps/v1|v2/history/{transactionId}`: one page of a customer's transactions.
public struct HistoryResponse: Codable, Sendable, Hashable {
    public var revision: String
    public var hasMore: Bool
    public var bundleId: String
    public var appAppleId: Int64
    public var environment: String
    public var signedTransactions: [String]

    public init(
        revision: String, hasMore: Bool, bundleId: String, appAppleId: Int64, environment: String,
        signedTransactions: [String]
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}

/// `GET /inApps/v1/lookup/{orderId}`: `status` 0 with the order's transactions, or 1 for an unknown order.
public struct OrderLookupResponse: Codable, Sendable, Hashable {
    public var status: Int
    public var signedTransactions: [String]

    public init(status: Int, signedTransactions: [String]) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}

/// `GET /inApps/v2/refund/lookup/{transactionId}`.
public struct RefundHistoryResponse: Codable, Sendable, Hashable {
    public var signedTransactions: [String]
    public var revision: String
    public var hasMore: Bool

    public init(signedTransactions: [String], revision: String, hasMore: Bool) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}

/// `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
public struct AppTransactionInfoResponse: Codable, Sendable, Hashable {
    public var signedAppTransactionInfo: String

    public init(signedAppTransactionInfo: String) { self.signedAppTransactionInfo = signedAppTransactionInfo }
}

/// `GET /inApps/v1/subscriptions/{transactionId}`: the statuses of the customer's subscriptions, by group.
public struct StatusResponse: Codable, Sendable, Hashable {
    public var environment: String
    public var bundleId: String
    public var appAppleId: Int64
    public var data: [SubscriptionGroupIdentifierItem]

    public init(environment: String, bundleId: String, appAppleId: Int64, data: [SubscriptionGroupIdentifierItem]) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

/// One subscription group's latest transactions in a ``StatusResponse``.
public struct SubscriptionGroupIdentifierItem: Codable, Sendable, Hashable {
    public var subscriptionGroupIdentifier: String
    public var lastTransactions: [LastTransactionsItem]

    public init(subscriptionGroupIdentifier: String, lastTransactions: [LastTransactionsItem]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// A subscription's status (1 active … 5 revoked) with its signed transaction and renewal info.
public struct LastTransactionsItem: Codable, Sendable, Hashable {
    public var status: Int
    public var originalTransactionId: String
    public var signedTransactionInfo: String
    public var signedRenewalInfo: String

    public init(status: Int, originalTransactionId: String, signedTransactionInfo: String, signedRenewalInfo: String) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
public struct ExtendRenewalDateResponse: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var webOrderLineItemId: String?
    public var success: Bool
    public var effectiveDate: Int64?

    public init(originalTransactionId: String, webOrderLineItemId: String?, success: Bool, effectiveDate: Int64?) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

/// `POST /inApps/v1/subscriptions/extend/mass`.
public struct MassExtendRenewalDateResponse: Codable, Sendable, Hashable {
    public var requestIdentifier: String

    public init(requestIdentifier: String) { self.requestIdentifier = requestIdentifier }
}

/// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
public struct MassExtendRenewalDateStatusResponse: Codable, Sendable, Hashable {
    public var requestIdentifier: String
    public var complete: Bool
    public var completeDate: Int64?
    public var succeededCount: Int64
    public var failedCount: Int64

    public init(
        requestIdentifier: String, complete: Bool, completeDate: Int64?, succeededCount: Int64, failedCount: Int64
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

/// `POST /inApps/v1/notifications/test`.
public struct SendTestNotificationResponse: Codable, Sendable, Hashable {
    public var testNotificationToken: String

    public init(testNotificationToken: String) { self.testNotificationToken = testNotificationToken }
}

/// `POST /inApps/v1/notifications/history`: one page of notifications with their send attempts.
public struct NotificationHistoryResponse: Codable, Sendable, Hashable {
    public var paginationToken: String?
    public var hasMore: Bool
    public var notificationHistory: [NotificationHistoryResponseItem]

    public init(paginationToken: String?, hasMore: Bool, notificationHistory: [NotificationHistoryResponseItem]) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

/// A notification with its attempts: a history entry, and the answer of
/// `GET /inApps/v1/notifications/test/{testNotificationToken}`.
public struct NotificationHistoryResponseItem: Codable, Sendable, Hashable {
    public var signedPayload: String
    public var sendAttempts: [SendAttemptItem]

    public init(signedPayload: String, sendAttempts: [SendAttemptItem]) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// One delivery attempt: when, and Apple's `SendAttemptResult` (`SUCCESS`, `TIMED_OUT`, …).
public struct SendAttemptItem: Codable, Sendable, Hashable {
    public var attemptDate: Int64
    public var sendAttemptResult: String

    public init(attemptDate: Int64, sendAttemptResult: String) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
