import Foundation

/// An app in the console, as App Store Connect knows it.
public struct App: Codable, Sendable, Hashable, Identifiable {
    /// Apple's `appAppleId`: a number Kiosk assigns, unique in the store, never reused.
    public var id: Int64
    /// CFBundleIdentifier, reverse-DNS, unique in the store.
    public var bundleId: String
    public var name: String
    /// The app-specific shared secret `verifyReceipt` checks; nil until one is generated.
    public var sharedSecret: String?
    /// Where App Store Server Notifications V2 go, per environment (several URLs allowed).
    public var productionNotificationURLs: [String]
    public var sandboxNotificationURLs: [String]
    /// App Store Connect's billing grace period: how many days (3, 16 or 28) a subscriber whose renewal failed
    /// keeps service while billing is retried; nil when off.
    public var billingGracePeriodDays: Int?
    /// Whether failed sandbox notifications are retried on Apple's production schedule (on the sandbox clock).
    /// Apple's sandbox sends once; Kiosk retries unless this is turned off.
    public var sandboxNotificationRetries: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: Int64, bundleId: String, name: String, sharedSecret: String? = nil,
        productionNotificationURLs: [String] = [], sandboxNotificationURLs: [String] = [],
        billingGracePeriodDays: Int? = nil, sandboxNotificationRetries: Bool = true, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.bundleId = bundleId
        self.name = name
        self.sharedSecret = sharedSecret
        self.productionNotificationURLs = productionNotificationURLs
        self.sandboxNotificationURLs = sandboxNotificationURLs
        self.billingGracePeriodDays = billingGracePeriodDays
        self.sandboxNotificationRetries = sandboxNotificationRetries
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public func notificationURLs(for environment: StoreEnvironment) -> [String] {
        environment == .production ? productionNotificationURLs : sandboxNotificationURLs
    }
}
