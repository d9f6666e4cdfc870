/// App Store Connect's user roles. Team keys and console users hold them, and they decide what each may read and
/// change.
public enum TeamRole: String, Codable, Sendable, CaseIterable {
    case admin = "ADMIN"
    case finance = "FINANCE"
    case sales = "SALES"
    case appManager = "APP_MANAGER"
    case developer = "DEVELOPER"
    case marketing = "MARKETING"
    case customerSupport = "CUSTOMER_SUPPORT"

    /// The role as App Store Connect writes it, such as "App Manager".
    public var title: String {
        switch self {
        case .admin: "Admin"
        case .finance: "Finance"
        case .sales: "Sales"
        case .appManager: "App Manager"
        case .developer: "Developer"
        case .marketing: "Marketing"
        case .customerSupport: "Customer Support"
        }
    }
}
