import Foundation

/// A subscription group: auto-renewable products of one app among which a customer holds at most one.
public struct SubscriptionGroup: Codable, Sendable, Hashable, Identifiable {
    /// Apple's `subscriptionGroupIdentifier` (as a number; Apple writes it as a string on the wire).
    public var id: Int64
    public var appId: App.ID
    /// Unique within the app.
    public var referenceName: String
    public var localizations: [SubscriptionGroupLocalization]
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: Int64, appId: App.ID, referenceName: String, localizations: [SubscriptionGroupLocalization] = [],
        createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.appId = appId
        self.referenceName = referenceName
        self.localizations = localizations
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A subscription group's name as customers see it in one locale.
public struct SubscriptionGroupLocalization: Codable, Sendable, Hashable {
    public var locale: String
    public var name: String
    public var customAppName: String?

    public init(locale: String, name: String, customAppName: String? = nil) {
        self.locale = locale
        self.name = name
        self.customAppName = customAppName
    }
}
