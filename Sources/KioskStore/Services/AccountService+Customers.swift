import Foundation
import KioskCore
import KioskStorage

/// Finding a customer the way support does: by what the customer or the merchant's server has at hand.
extension AccountService {
    /// One customer found, with the app a transaction matched in (nil when found by email).
    public struct CustomerMatch: Sendable, Hashable {
        public var account: Account
        public var matchedBy: String
    }

    /// A customer's history in one environment, app by app: transactions (newest first) and the notifications sent
    /// about them.
    public struct CustomerHistory: Sendable {
        public var account: Account
        public var apps: [(app: App, transactions: [StoreTransaction], notifications: [ServerNotification])]
    }

    /// The customers `query` names in either environment: an email address, a transaction id, an original
    /// transaction id, an order id or an app account token.
    public func findCustomers(_ query: String) async throws -> [CustomerMatch] {
        let query = query.trimmingCharacters(in: .whitespaces)
        guard !query.isEmpty, query.count <= 254 else { return [] }
        return try await database.transaction { tx in
            var matches: [CustomerMatch] = []
            func add(_ accountId: UUID?, _ environment: StoreEnvironment, _ how: String) async throws {
                guard let accountId, !matches.contains(where: { $0.account.id == accountId }),
                    let account = try await tx.account(id: accountId, environment: environment)
                else { return }
                matches.append(CustomerMatch(account: account, matchedBy: how))
            }
            let apps = try await tx.apps()
            for environment in StoreEnvironment.allCases {
                if query.contains("@") {
                    try await add(
                        try await tx.account(email: query, environment: environment)?.id, environment, "email")
                    continue
                }
                if let token = UUID(uuidString: query) {
                    for accountId in try await tx.accountIds(appAccountToken: token, environment: environment) {
                        try await add(accountId, environment, "app account token")
                    }
                }
                for app in apps {
                    if let id = Int64(query) {
                        try await add(
                            try await tx.accountId(anyTransactionId: id, appId: app.id, environment: environment),
                            environment, "transaction id in \(app.bundleId)")
                    }
                    for transaction in try await tx.transactions(
                        orderId: query, appId: app.id, environment: environment)
                    {
                        try await add(transaction.accountId, environment, "order id in \(app.bundleId)")
                    }
                }
            }
            return matches
        }
    }

    /// The history of the customer `email` in `environment`.
    public func customerHistory(_ environment: StoreEnvironment, email: String) async throws -> CustomerHistory {
        try await database.transaction { tx in
            guard let account = try await tx.account(email: email, environment: environment) else {
                throw KioskError(
                    .accountNotFound, "No \(environment.rawValue) customer has the email \(email.prefix(254)).",
                    field: "email", fix: "Search by email, transaction id or order id on the Customers page.")
            }
            var apps: [(App, [StoreTransaction], [ServerNotification])] = []
            for app in try await tx.apps() {
                let transactions = try await tx.transactions(
                    accountId: account.id, appId: app.id, environment: environment)
                guard !transactions.isEmpty else { continue }
                let originals = Set(transactions.map(\.originalTransactionId))
                let notifications = try await tx.notifications(appId: app.id, environment: environment, limit: 500)
                    .filter { $0.originalTransactionId.map(originals.contains) ?? false }
                apps.append(
                    (app, transactions.sorted { ($0.purchaseDate, $0.id) > ($1.purchaseDate, $1.id) }, notifications))
            }
            return CustomerHistory(account: account, apps: apps)
        }
    }
}
