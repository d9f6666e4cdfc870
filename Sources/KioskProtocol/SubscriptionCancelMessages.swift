import Foundation

/// `POST /subscriptions/{originalTransactionId}/cancel` of the client protocol: the signed-in customer taps Cancel
/// in the App Store's manage-subscriptions sheet for a subscription of theirs in the session's app. The store runs
/// Apple's retention flow (the app's Get Retention Message endpoint, else its retention offer, else the default
/// message) and applies `retentionChoice`.
public struct CancelSubscriptionRequest: Codable, Sendable, Hashable {
    /// Made once by the client for this cancellation and sent again on a retry: a repeated request answers the
    /// first one's outcome and changes nothing.
    public var requestIdentifier: UUID
    /// What the customer does with the retention message shown: `cancel` (the default: they confirm) or `accept`
    /// (they take the offer or plan switch, or keep the subscription after a message).
    public var retentionChoice: String?

    public init(requestIdentifier: UUID, retentionChoice: String? = nil) {
        self.requestIdentifier = requestIdentifier
        self.retentionChoice = retentionChoice
    }
}

/// The subscription after a cancellation, and what the customer was shown and what came of it.
public struct CancelSubscriptionResponse: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var autoRenewStatus: Bool
    public var autoRenewProductId: String
    /// Milliseconds since 1970: when the current period ends.
    public var expiresDate: Int64
    /// Nil when auto-renew was already off: there was nothing to cancel.
    public var retention: RetentionEvent?

    public init(
        originalTransactionId: String, autoRenewStatus: Bool, autoRenewProductId: String, expiresDate: Int64,
        retention: RetentionEvent?
    ) {
        self.originalTransactionId = originalTransactionId
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.expiresDate = expiresDate
        self.retention = retention
    }
}
