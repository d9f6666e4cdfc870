import Foundation

/// A team key for the App Store Connect API (`/v1/…`), separate from In-App Purchase keys: it signs ES256 tokens
/// with `aud` `appstoreconnect-v1`, and its roles decide what it may read. Kiosk keeps only the public key.
public struct TeamAPIKey: Codable, Sendable, Hashable, Identifiable {
    /// App Store Connect's user roles a team key can hold.
    public enum Role: String, Codable, Sendable, CaseIterable {
        case admin = "ADMIN"
        case finance = "FINANCE"
        case sales = "SALES"
        case appManager = "APP_MANAGER"
        case developer = "DEVELOPER"
        case marketing = "MARKETING"
        case customerSupport = "CUSTOMER_SUPPORT"
    }

    /// Ten upper-case letters and digits (`kid`).
    public var id: String
    public var name: String
    public var roles: [Role]
    public var publicKeyPEM: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(
        id: String, name: String, roles: [Role], publicKeyPEM: String, createdAt: Date, revokedAt: Date? = nil
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
}
