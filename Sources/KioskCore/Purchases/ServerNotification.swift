import Foundation

/// An App Store Server Notification V2: its payload is made when the change that causes it commits, and signed each
/// time it is sent or listed (the same payload bytes and UUID on every attempt; only the signature differs).
public struct ServerNotification: Codable, Sendable, Hashable {
    /// Where a notification is on its way to the app's server.
    public enum State: String, Codable, Sendable, CaseIterable, Hashable {
        /// Committed, not yet (fully) attempted.
        case pending
        /// Every URL of the environment answered 200–206.
        case delivered
        /// At least one URL did not.
        case failed
        /// The app had no URL for the environment when the notification was due.
        case unconfigured
    }

    /// Lower-case UUID, Apple's `notificationUUID`.
    public var uuid: String
    public var environment: StoreEnvironment
    public var appId: App.ID
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    /// The transaction the notification is about, if any.
    public var transactionId: Int64?
    public var originalTransactionId: Int64?
    /// The JSON its JWS signs (Apple's `ResponseBodyV2DecodedPayload`), keys sorted.
    public var payload: String
    /// `<uuid>_<milliseconds>` for notifications `POST /inApps/v1/notifications/test` requested.
    public var testToken: String?
    public var state: State
    /// When the next delivery attempt is due (nil when none is planned), on its environment's clock.
    public var nextAttemptAt: Date?
    /// Scheduled delivery attempts made so far (the first one and retries; replays do not count).
    public var attemptCount: Int
    public var createdAt: Date

    public init(
        uuid: String, environment: StoreEnvironment, appId: App.ID, notificationType: NotificationType,
        subtype: NotificationSubtype?,
        transactionId: Int64?, originalTransactionId: Int64?, payload: String, testToken: String?,
        state: State, nextAttemptAt: Date? = nil, attemptCount: Int = 0, createdAt: Date
    ) {
        self.uuid = uuid
        self.environment = environment
        self.appId = appId
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.payload = payload
        self.testToken = testToken
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.attemptCount = attemptCount
        self.createdAt = createdAt
    }
}

extension ServerNotification {
    /// How long after an attempt that failed the next one is due, in hours (Apple's schedule: 1, 12, 24, 48 and
    /// 72 hours after the previous attempt); after the last retry a notification stays failed.
    public static let retryDelaysInHours: [Int] = [1, 12, 24, 48, 72]

    /// When the attempt after the `attemptCount`th (made at `attemptedAt`) is due, if one is.
    public static func retryDate(afterAttempt attemptCount: Int, at attemptedAt: Date) -> Date? {
        guard (1...retryDelaysInHours.count).contains(attemptCount) else { return nil }
        return attemptedAt.addingTimeInterval(TimeInterval(retryDelaysInHours[attemptCount - 1] * 3600))
    }
}

/// One POST of a notification to one URL.
public struct NotificationAttempt: Codable, Sendable, Hashable {
    /// Apple's `sendAttemptResult` values.
    public enum Result: String, Codable, Sendable, CaseIterable, Hashable {
        case success = "SUCCESS"
        case timedOut = "TIMED_OUT"
        case tlsIssue = "TLS_ISSUE"
        case circularRedirect = "CIRCULAR_REDIRECT"
        case noResponse = "NO_RESPONSE"
        case socketIssue = "SOCKET_ISSUE"
        case unsupportedCharset = "UNSUPPORTED_CHARSET"
        case invalidResponse = "INVALID_RESPONSE"
        case prematureClose = "PREMATURE_CLOSE"
        case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        case other = "OTHER"
    }

    public var notificationUUID: String
    /// 1 for the first delivery, counting up with retries.
    public var attempt: Int
    public var url: String
    public var attemptedAt: Date
    public var result: Result
    public var httpStatus: Int?

    public init(
        notificationUUID: String, attempt: Int, url: String, attemptedAt: Date, result: Result, httpStatus: Int?
    ) {
        self.notificationUUID = notificationUUID
        self.attempt = attempt
        self.url = url
        self.attemptedAt = attemptedAt
        self.result = result
        self.httpStatus = httpStatus
    }
}

/// A renewal-date extension request of the App Store Server API: for one subscription
/// (`originalTransactionId`) or for every active subscriber of a product (`productId`).
public struct RenewalExtensionRequest: Codable, Sendable, Hashable {
    public var environment: StoreEnvironment
    public var appId: App.ID
    public var requestIdentifier: String
    /// Set for a mass extension.
    public var productId: String?
    /// Set for a single extension.
    public var originalTransactionId: Int64?
    public var extendByDays: Int
    public var reasonCode: Int
    /// Alpha-3 storefront codes a mass extension is limited to.
    public var storefrontCountryCodes: [String]?
    public var createdAt: Date
    public var completedAt: Date?
    public var succeededCount: Int
    public var failedCount: Int
    /// A single extension's result: the subscription's `webOrderLineItemId` and its new expiry.
    public var webOrderLineItemId: Int64?
    public var effectiveDate: Date?

    public init(
        environment: StoreEnvironment, appId: App.ID, requestIdentifier: String, productId: String?,
        originalTransactionId: Int64?, extendByDays: Int, reasonCode: Int, storefrontCountryCodes: [String]?,
        createdAt: Date, completedAt: Date?, succeededCount: Int, failedCount: Int, webOrderLineItemId: Int64? = nil,
        effectiveDate: Date? = nil
    ) {
        self.environment = environment
        self.appId = appId
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.originalTransactionId = originalTransactionId
        self.extendByDays = extendByDays
        self.reasonCode = reasonCode
        self.storefrontCountryCodes = storefrontCountryCodes
        self.createdAt = createdAt
        self.completedAt = completedAt
        self.succeededCount = succeededCount
        self.failedCount = failedCount
        self.webOrderLineItemId = webOrderLineItemId
        self.effectiveDate = effectiveDate
    }
}

/// Which notifications a notification-history page holds: one app in one environment, created in
/// `[start, end)`, oldest first, after `after`.
public struct NotificationHistoryQuery: Sendable, Hashable {
    /// A position in the history: the last notification of the previous page.
    public struct Cursor: Codable, Sendable, Hashable {
        public var createdAt: Date
        public var uuid: String

        public init(createdAt: Date, uuid: String) {
            self.createdAt = createdAt
            self.uuid = uuid
        }
    }

    public var environment: StoreEnvironment
    public var appId: App.ID
    public var start: Date
    public var end: Date
    public var notificationType: NotificationType?
    public var subtype: NotificationSubtype?
    /// Only notifications about this subscription or purchase (their original transaction id).
    public var originalTransactionId: Int64?
    /// Only notifications not (yet) delivered.
    public var onlyFailures: Bool
    public var after: Cursor?
    public var limit: Int

    public init(
        environment: StoreEnvironment, appId: App.ID, start: Date, end: Date, notificationType: NotificationType?,
        subtype: NotificationSubtype?, originalTransactionId: Int64?, onlyFailures: Bool, after: Cursor?, limit: Int
    ) {
        self.environment = environment
        self.appId = appId
        self.start = start
        self.end = end
        self.notificationType = notificationType
        self.subtype = subtype
        self.originalTransactionId = originalTransactionId
        self.onlyFailures = onlyFailures
        self.after = after
        self.limit = limit
    }
}
