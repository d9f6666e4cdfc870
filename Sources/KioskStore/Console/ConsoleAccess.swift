import Hummingbird
import KioskCore

/// What each part of the console asks of the person using it, by the first path segment after `/console/`: one
/// permission to read it (GET) and one to change anything in it (POST). A part not listed here may be read by anyone
/// signed in but changed only by an Admin, so a new page is closed until it is given its rule.
enum ConsoleAccess {
    struct Rule {
        var read: ConsolePermission?
        var change: ConsolePermission?
    }

    static let rules: [String: Rule] = [
        "": Rule(), "account": Rule(), "sign-out": Rule(), "customers": Rule(), "health": Rule(), "checks": Rule(),
        "apps": Rule(change: .manageCatalog),
        "sandbox": Rule(change: .useSandbox), "testers": Rule(change: .useSandbox),
        "notifications": Rule(change: .resendNotifications), "refunds": Rule(change: .refundCustomers),
        "agreements": Rule(read: .manageAgreements, change: .manageAgreements),
        "money": Rule(read: .readSales, change: .readSales),
        "subscriptions": Rule(read: .readSales, change: .readSales),
        "keys": Rule(read: .manageKeys, change: .manageKeys),
        "audit": Rule(read: .readAuditLog, change: .readAuditLog),
        "team": Rule(read: .manageTeam, change: .manageTeam),
    ]

    /// The permission a request for `path` (under `/console`) with `method` needs, nil when none.
    static func permission(method: HTTPRequest.Method, path: String) -> ConsolePermission? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let part = segments.count > 1 ? String(segments[1]) : ""
        let reads = method == .get || method == .head
        guard let rule = rules[part] else { return reads ? nil : .manageTeam }
        return reads ? rule.read : rule.change
    }

    /// Pages a user with a temporary password may still open: choosing their own password, and signing out.
    static func allowedWithTemporaryPassword(_ path: String) -> Bool {
        ["/console/account", "/console/account/password", "/console/account/sign-out-everywhere", "/console/sign-out"]
            .contains(path)
    }
}
