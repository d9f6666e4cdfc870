import Foundation

/// A team key for the App Store Connect API (`/v1/…`), separate from In-App Purchase keys: it signs ES256 tokens
/// with `aud` `appstoreconnect-v1`, and its roles decide what it may read. Kiosk keeps only the public key.
public struct TeamAPIKey: Codable, Sendable, Hashable, Identifiable {
    /// Ten upper-case letters and digits (`kid`).
    public var id: String
    public var name: String
    public var roles: [TeamRole]
    public var publicKeyPEM: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(
        id: String, name: String, roles: [TeamRole], publicKeyPEM: String, createdAt: Date, revokedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.roles = roles
        self.publicKeyPEM = publicKeyPEM
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Sales and Trends reports: Admin, Finance and Sales, as in App Store Connect.
    public var readsSalesReports: Bool { !Set(roles).isDisjoint(with: [.admin, .finance, .sales]) }
    /// Payments and Financial Reports: Admin and Finance.
    public var readsFinanceReports: Bool { !Set(roles).isDisjoint(with: [.admin, .finance]) }
    /// Creating, changing and deleting in-app purchases, subscriptions and their offers: Admin and App Manager.
    public var changesCatalog: Bool { !Set(roles).isDisjoint(with: [.admin, .appManager]) }
}
