import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Accounts of both environments: production customers and sandbox testers. Ids are stored as lower-case UUID
/// text; an email is unique within its environment regardless of case.
///
/// Every client request reads its session's account, and only the admin API and the console change one, so an
/// account read by id goes through the ``ReadCache`` and every change to accounts changes the cached rows' version.
extension SQLStorageTransaction {
    func insertAccount(_ account: Account) async throws {
        try await changesCachedRows()
        let sandbox = account.sandbox
        try await session.run(
            """
            INSERT INTO accounts (id, environment, email, password_hash, first_name, last_name, storefront,
                payment_outcome, interrupt_purchases, ask_to_buy, renewal_rate, purchase_history_cleared_at,
                created_at, updated_at)
            VALUES (\(bind: Self.text(account.id)), \(bind: account.environment.rawValue), \(bind: account.email),
                \(bind: account.passwordHash), \(bind: account.firstName), \(bind: account.lastName),
                \(bind: account.storefront), \(bind: account.paymentOutcome.rawValue),
                \(bind: sandbox?.interruptPurchases), \(bind: sandbox?.askToBuy), \(bind: sandbox?.renewalRate.rawValue),
                \(bind: sandbox?.purchaseHistoryClearedAt?.millisecondsSince1970),
                \(bind: account.createdAt.millisecondsSince1970), \(bind: account.updatedAt.millisecondsSince1970))
            """
        )
    }

    func updateAccount(_ account: Account) async throws {
        try await changesCachedRows()
        let sandbox = account.sandbox
        let row = try await session.first(
            """
            UPDATE accounts SET email = \(bind: account.email), password_hash = \(bind: account.passwordHash),
                first_name = \(bind: account.firstName), last_name = \(bind: account.lastName),
                storefront = \(bind: account.storefront), payment_outcome = \(bind: account.paymentOutcome.rawValue),
                interrupt_purchases = \(bind: sandbox?.interruptPurchases), ask_to_buy = \(bind: sandbox?.askToBuy),
                renewal_rate = \(bind: sandbox?.renewalRate.rawValue),
                purchase_history_cleared_at = \(bind: sandbox?.purchaseHistoryClearedAt?.millisecondsSince1970),
                created_at = \(bind: account.createdAt.millisecondsSince1970),
                updated_at = \(bind: account.updatedAt.millisecondsSince1970)
            WHERE id = \(bind: Self.text(account.id)) AND environment = \(bind: account.environment.rawValue)
            RETURNING id
            """
        )
        try requireUpdated(row, "\(account.environment == .sandbox ? "tester" : "customer") \(account.id)")
    }

    func deleteAccount(id: Account.ID) async throws {
        try await changesCachedRows()
        try await session.run("DELETE FROM accounts WHERE id = \(bind: Self.text(id))")
    }

    func account(id: Account.ID, environment: StoreEnvironment) async throws -> Account? {
        try await cached(.account(id, environment)) {
            try await session.first(
                """
                SELECT * FROM accounts WHERE id = \(bind: Self.text(id)) AND environment = \(bind: environment.rawValue)
                """
            ).map(Self.decodeAccount)
        }
    }

    func accounts(ids: [Account.ID], environment: StoreEnvironment) async throws -> [Account] {
        guard !ids.isEmpty else { return [] }
        // By id alone, the environment checked here: with `environment = ?` in the query, SQLite searched the email
        // index by its first column and read every account of the environment (7 ms for a renewal batch's 128 of
        // 14,000), where the primary key finds each in a few page reads.
        return try await session.all("SELECT * FROM accounts WHERE id IN (\(binds: ids.map(Self.text)))")
            .map(Self.decodeAccount).filter { $0.environment == environment }
    }

    func account(email: String, environment: StoreEnvironment) async throws -> Account? {
        try await session.first(
            """
            SELECT * FROM accounts
            WHERE environment = \(bind: environment.rawValue) AND lower(email) = \(bind: email.lowercased())
            """
        ).map(Self.decodeAccount)
    }

    func accounts(environment: StoreEnvironment, limit: Int?, offset: Int) async throws -> [Account] {
        // No limit is the largest one both engines take (SQLite has no OFFSET without LIMIT, PostgreSQL no LIMIT -1).
        try await session.all(
            """
            SELECT * FROM accounts WHERE environment = \(bind: environment.rawValue) ORDER BY email
            LIMIT \(bind: limit ?? Int.max) OFFSET \(bind: offset)
            """
        ).map(Self.decodeAccount)
    }

    func accountCount(environment: StoreEnvironment) async throws -> Int {
        let row = try await session.first(
            "SELECT COUNT(*) AS n FROM accounts WHERE environment = \(bind: environment.rawValue)")
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
    }

    private static func decodeAccount(_ row: any SQLRow) throws -> Account {
        let environment = try row.enumeration("environment", as: StoreEnvironment.self)
        return Account(
            id: try row.uuid("id"), environment: environment,
            email: try row.decode(column: "email", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            firstName: try row.decode(column: "first_name", as: String.self),
            lastName: try row.decode(column: "last_name", as: String.self),
            storefront: try row.decode(column: "storefront", as: String.self),
            paymentOutcome: try row.enumeration("payment_outcome", as: PaymentOutcome.self),
            sandbox: environment == .sandbox
                ? SandboxSettings(
                    interruptPurchases: try row.decode(column: "interrupt_purchases", as: Bool.self),
                    askToBuy: try row.decode(column: "ask_to_buy", as: Bool.self),
                    renewalRate: try row.enumeration("renewal_rate", as: RenewalRate.self),
                    purchaseHistoryClearedAt: try row.optionalDate("purchase_history_cleared_at"))
                : nil,
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }
}
