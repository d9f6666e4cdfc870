import KioskCore

/// The payload of an App Store Server Notification V2 `signedPayload`, in Apple's
/// `ResponseBodyV2DecodedPayload` shape. Exactly one of `data` and `summary` is present.
public struct NotificationPayload: Codable, Sendable, Hashable {
    /// `SUBSCRIBED`, `DID_RENEW`, `TEST`, … (Apple's `notificationType`).
    public var notificationType: NotificationType
    /// `INITIAL_BUY`, `BILLING_RECOVERY`, … or absent.
    public var subtype: NotificationSubtype?
    /// Lower-case UUID; the same on every retry of one notification.
    public var notificationUUID: String
    /// Always `2.0`.
    public var version: String
    public var signedDate: Int64
    public var data: NotificationData?
    public var summary: NotificationSummary?
    /// For notifications about the app rather than a purchase (`RESCIND_CONSENT`): sent instead of `data`.
    public var appData: NotificationAppData?

    public init(
        notificationType: NotificationType, subtype: NotificationSubtype? = nil, notificationUUID: String,
        version: String = "2.0",
        signedDate: Int64, data: NotificationData? = nil, summary: NotificationSummary? = nil,
        appData: NotificationAppData? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
        self.summary = summary
        self.appData = appData
    }
}

/// A notification's `appData` object: the app, the environment and the customer's signed app transaction.
public struct NotificationAppData: Codable, Sendable, Hashable {
    public var appAppleId: Int64
    public var bundleId: String
    /// `Production` or `Sandbox`.
    public var environment: String
    /// The customer's `AppTransaction`, signed as the Server API's Get App Transaction Info signs it.
    public var signedAppTransactionInfo: String?

    public init(appAppleId: Int64, bundleId: String, environment: String, signedAppTransactionInfo: String?) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}

/// A notification's `data` object: the app, the environment and the signed transaction and renewal info.
public struct NotificationData: Codable, Sendable, Hashable {
    public var appAppleId: Int64
    public var bundleId: String
    public var bundleVersion: String?
    /// `Production` or `Sandbox`.
    public var environment: String
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?
    /// Subscription status 1…5, for subscription notifications.
    public var status: Int?
    /// For `CONSUMPTION_REQUEST` only.
    public var consumptionRequestReason: String?

    public init(
        appAppleId: Int64, bundleId: String, bundleVersion: String? = nil, environment: String,
        signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil, status: Int? = nil,
        consumptionRequestReason: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}

/// A notification's `summary` object, sent with `RENEWAL_EXTENSION` / `SUMMARY` when a mass extension ends.
public struct NotificationSummary: Codable, Sendable, Hashable {
    public var requestIdentifier: String
    /// `Production` or `Sandbox`.
    public var environment: String
    public var appAppleId: Int64
    public var bundleId: String
    public var productId: String
    public var storefrontCountryCodes: [String]?
    public var failedCount: Int64
    public var succeededCount: Int64

    public init(
        requestIdentifier: String, environment: String, appAppleId: Int64, bundleId: String, productId: String,
        storefrontCountryCodes: [String]? = nil, failedCount: Int64, succeededCount: Int64
    ) {
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
        self.failedCount = failedCount
        self.succeededCount = succeededCount
    }
}
