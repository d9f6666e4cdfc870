import Foundation

// The sandbox clock and subscription test controls, at ``TestControlRoutes``, admin token.
//
// - `GET /clock` → `TestClockResponse`
// - `POST /clock` `TestClockRequest` → `TestClockResponse` (after `advance`/`set`, every subscription event due
//   by the new time has happened)
// - `GET /apps/{bundleId}/subscriptions?tester=EMAIL` → `TestSubscriptionsResponse`
// - `POST /apps/{bundleId}/subscriptions/{originalTransactionId}` `TestSubscriptionRequest` → `TestSubscriptionInfo`
// - `PUT /apps/{bundleId}/grace-period` `TestGracePeriod` → `TestGracePeriod`; `GET` shows it

/// Moves the sandbox clock. Time only moves forward.
public struct TestClockRequest: Codable, Sendable, Hashable {
    /// `freeze`, `resume`, `advance`, `set` or `reset` (back to the real time, if that is not earlier).
    public var action: String
    /// For `advance`: a duration such as `90m`, `3d`, `1h30m`, or seconds.
    public var by: TestClockAmount?
    /// For `set`: an ISO 8601 date or milliseconds since 1970.
    public var to: TestClockAmount?

    public init(action: String, by: TestClockAmount? = nil, to: TestClockAmount? = nil) {
        self.action = action
        self.by = by
        self.to = to
    }
}

/// A JSON value that may be text or a number.
public enum TestClockAmount: Codable, Sendable, Hashable {
    case text(String)
    case number(Double)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        }
    }
}

/// Where the sandbox clock stands, and (after `advance` or `set`) what the subscriptions did meanwhile.
public struct TestClockResponse: Codable, Sendable, Hashable {
    /// Sandbox now, milliseconds since 1970.
    public var now: Int64
    /// Sandbox now, ISO 8601.
    public var date: String
    public var frozen: Bool
    /// How far the sandbox runs ahead of the real clock, in milliseconds (while not frozen).
    public var offsetMilliseconds: Int64
    public var renewed: Int?
    public var recovered: Int?
    public var expired: Int?
    public var billingRetries: Int?
    public var gracePeriodsExpired: Int?

    public init(
        now: Int64, date: String, frozen: Bool, offsetMilliseconds: Int64, renewed: Int? = nil, recovered: Int? = nil,
        expired: Int? = nil, billingRetries: Int? = nil, gracePeriodsExpired: Int? = nil
    ) {
        self.now = now
        self.date = date
        self.frozen = frozen
        self.offsetMilliseconds = offsetMilliseconds
        self.renewed = renewed
        self.recovered = recovered
        self.expired = expired
        self.billingRetries = billingRetries
        self.gracePeriodsExpired = gracePeriodsExpired
    }
}

/// A test control acting on one sandbox subscription.
public struct TestSubscriptionRequest: Codable, Sendable, Hashable {
    /// `renew` (now), `expire` (now), `fail-renewal` (the next renewal fails), `recover` (retry billing now,
    /// successfully), `auto-renew-on`, `auto-renew-off`, `set-auto-renew-product` (with `productId`),
    /// `price-increase`, `consent-accept`, `consent-decline`.
    public var action: String
    public var productId: String?
    /// For `auto-renew-off`, what the subscriber does with the retention message the App Store shows them:
    /// `cancel` (the default: they confirm the cancellation) or `accept` (they take the offer or plan switch shown,
    /// or keep the subscription after a message).
    public var retentionChoice: String?
    /// For `auto-renew-off`, the client's identifier of the request, made once and sent again on a retry: a repeated
    /// request answers the first one's outcome and changes nothing. The store makes one when it is absent.
    public var requestIdentifier: UUID?

    public init(
        action: String, productId: String? = nil, retentionChoice: String? = nil, requestIdentifier: UUID? = nil
    ) {
        self.action = action
        self.productId = productId
        self.retentionChoice = retentionChoice
        self.requestIdentifier = requestIdentifier
    }
}

/// A sandbox subscription as the test controls show it.
public struct TestSubscriptionInfo: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var latestTransactionId: String
    public var productId: String
    public var autoRenewProductId: String
    public var autoRenewStatus: Bool
    /// `active`, `expired`, `billing_retry`, `grace_period`, `revoked`.
    public var state: String
    /// Apple's status 1…5.
    public var status: Int
    public var expiresDate: Int64
    public var nextEventDate: Int64?
    public var expirationIntent: Int?
    public var gracePeriodExpiresDate: Int64?
    public var priceIncreaseStatus: Int?
    public var renewalCount: Int
    /// For `auto-renew-off`: the retention message the subscriber saw, and what came of it.
    public var retention: RetentionEvent?

    public init(
        originalTransactionId: String, latestTransactionId: String, productId: String, autoRenewProductId: String,
        autoRenewStatus: Bool, state: String, status: Int, expiresDate: Int64, nextEventDate: Int64?,
        expirationIntent: Int?, gracePeriodExpiresDate: Int64?, priceIncreaseStatus: Int?, renewalCount: Int,
        retention: RetentionEvent? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.latestTransactionId = latestTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.state = state
        self.status = status
        self.expiresDate = expiresDate
        self.nextEventDate = nextEventDate
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.renewalCount = renewalCount
        self.retention = retention
    }
}

public struct TestSubscriptionsResponse: Codable, Sendable, Hashable {
    public var subscriptions: [TestSubscriptionInfo]

    public init(subscriptions: [TestSubscriptionInfo]) {
        self.subscriptions = subscriptions
    }
}

/// The app's billing grace period: 3, 16 or 28 days, or nil (off).
public struct TestGracePeriod: Codable, Sendable, Hashable {
    public var days: Int?

    public init(days: Int?) {
        self.days = days
    }
}
