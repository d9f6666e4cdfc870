import Foundation

/// A person who signs in to the console with an email address and a password. Their roles decide what they may
/// read and change; the admin token stays as the way in for the first Admin and for scripts.
public struct ConsoleUser: Codable, Sendable, Hashable {
    /// Lower-cased; the user's identity in sessions and the audit log.
    public var email: String
    public var name: String
    public var roles: [TeamRole]
    /// A slow password hash (`PasswordHasher`), never the password.
    public var passwordHash: String
    /// The password was made by the store (on creation or reset) and must be replaced at the next sign-in.
    public var passwordIsTemporary: Bool
    /// When the password was last set (made by the store, or chosen); nil for users from before this was kept.
    public var passwordSetAt: Date?
    public var disabledAt: Date?
    public var createdAt: Date

    /// How long a temporary password signs in: 72 hours, then an Admin resets it (OWASP ASVS 2.3.1).
    public static let temporaryPasswordLifetime: TimeInterval = 72 * 3600

    public init(
        email: String, name: String, roles: [TeamRole], passwordHash: String, passwordIsTemporary: Bool,
        passwordSetAt: Date? = nil, disabledAt: Date? = nil, createdAt: Date
    ) {
        self.email = email
        self.name = name
        self.roles = roles
        self.passwordHash = passwordHash
        self.passwordIsTemporary = passwordIsTemporary
        self.passwordSetAt = passwordSetAt
        self.disabledAt = disabledAt
        self.createdAt = createdAt
    }

    /// When the temporary password stops signing in; nil when the password is the user's own.
    public var temporaryPasswordExpiresAt: Date? {
        guard passwordIsTemporary else { return nil }
        return (passwordSetAt ?? createdAt).addingTimeInterval(Self.temporaryPasswordLifetime)
    }

    /// What the user's roles allow together.
    public var permissions: Set<ConsolePermission> { ConsolePermission.granted(to: roles) }
}

/// What a console page or action asks of the person using it. Reading apps, products, customers, the sandbox,
/// notifications and health needs no permission; everything here does.
public enum ConsolePermission: String, Sendable, CaseIterable {
    /// Add people, change their roles, disable them, reset their passwords.
    case manageTeam
    /// Create and revoke In-App Purchase keys and team keys.
    case manageKeys
    /// Read the audit log.
    case readAuditLog
    /// Read and change the Paid Apps agreement, tax and banking.
    case manageAgreements
    /// Read the money pages and download reports.
    case readSales
    /// Create and change apps, products, subscriptions, offers and offer codes; import catalogs.
    case manageCatalog
    /// Use the sandbox: testers, the sandbox clock and the test controls (buy, renew, refund, expire…).
    case useSandbox
    /// Send a server notification again.
    case resendNotifications
    /// Refund a production purchase, or take a refund back.
    case refundCustomers

    /// The permissions App Store Connect's roles carry, as close to its own split as Kiosk's pages allow.
    public static func granted(to roles: [TeamRole]) -> Set<ConsolePermission> {
        roles.reduce(into: []) { permissions, role in
            switch role {
            case .admin: permissions.formUnion(allCases)
            case .finance: permissions.formUnion([.manageAgreements, .readSales, .refundCustomers])
            case .sales: permissions.insert(.readSales)
            case .appManager: permissions.formUnion([.manageCatalog, .useSandbox, .resendNotifications, .readSales])
            case .developer: permissions.formUnion([.useSandbox, .resendNotifications])
            case .marketing: break  // reads what everyone reads
            case .customerSupport: permissions.formUnion([.resendNotifications, .refundCustomers])
            }
        }
    }

    /// What the permission lets one do, for a refusal: "change the catalog".
    public var summary: String {
        switch self {
        case .manageTeam: "manage the team"
        case .manageKeys: "manage keys"
        case .readAuditLog: "read the audit log"
        case .manageAgreements: "see and change agreements, tax and banking"
        case .readSales: "see sales and proceeds"
        case .manageCatalog: "change the catalog"
        case .useSandbox: "use the sandbox and its test controls"
        case .resendNotifications: "send notifications again"
        case .refundCustomers: "refund customers' purchases"
        }
    }

    /// The roles that carry the permission, for a refusal's fix: "Admin or Finance".
    public var roles: [TeamRole] { TeamRole.allCases.filter { Self.granted(to: [$0]).contains(self) } }
}
