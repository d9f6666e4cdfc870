import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Sandbox testers. Ids are stored as lower-case UUID text; emails are unique regardless of case.
extension SQLStorageTransaction {
    func insertTester(_ tester: Tester) async throws {
        try await session.run(
            """
            INSERT INTO testers (id, email, password_hash, first_name, last_name, storefront, interrupt_purchases,
                ask_to_buy, renewal_rate, payment_outcome, purchase_history_cleared_at, created_at, updated_at)
            VALUES (\(bind: Self.text(tester.id)), \(bind: tester.email), \(bind: tester.passwordHash),
                \(bind: tester.firstName), \(bind: tester.lastName), \(bind: tester.storefront),
                \(bind: tester.settings.interruptPurchases), \(bind: tester.settings.askToBuy),
                \(bind: tester.settings.renewalRate.rawValue), \(bind: tester.settings.paymentOutcome.rawValue),
                \(bind: tester.purchaseHistoryClearedAt?.millisecondsSince1970),
                \(bind: tester.createdAt.millisecondsSince1970), \(bind: tester.updatedAt.millisecondsSince1970))
            """
        )
    }

    func updateTester(_ tester: Tester) async throws {
        let row = try await session.first(
            """
            UPDATE testers SET email = \(bind: tester.email), password_hash = \(bind: tester.passwordHash),
                first_name = \(bind: tester.firstName), last_name = \(bind: tester.lastName),
                storefront = \(bind: tester.storefront),
                interrupt_purchases = \(bind: tester.settings.interruptPurchases),
                ask_to_buy = \(bind: tester.settings.askToBuy),
                renewal_rate = \(bind: tester.settings.renewalRate.rawValue),
                payment_outcome = \(bind: tester.settings.paymentOutcome.rawValue),
                purchase_history_cleared_at = \(bind: tester.purchaseHistoryClearedAt?.millisecondsSince1970),
                created_at = \(bind: tester.createdAt.millisecondsSince1970),
                updated_at = \(bind: tester.updatedAt.millisecondsSince1970)
            WHERE id = \(bind: Self.text(tester.id))
            RETURNING id
            """
        )
        try requireUpdated(row, "tester \(tester.id)")
    }

    func deleteTester(id: Tester.ID) async throws {
        try await session.run("DELETE FROM testers WHERE id = \(bind: Self.text(id))")
    }

    func tester(id: Tester.ID) async throws -> Tester? {
        try await session.first("SELECT * FROM testers WHERE id = \(bind: Self.text(id))").map(Self.decodeTester)
    }

    func tester(email: String) async throws -> Tester? {
        try await session.first("SELECT * FROM testers WHERE lower(email) = \(bind: email.lowercased())")
            .map(Self.decodeTester)
    }

    func testers() async throws -> [Tester] {
        try await session.all("SELECT * FROM testers ORDER BY email").map(Self.decodeTester)
            .sorted { $0.email < $1.email }
    }

    private static func decodeTester(_ row: any SQLRow) throws -> Tester {
        Tester(
            id: try row.uuid("id"),
            email: try row.decode(column: "email", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            firstName: try row.decode(column: "first_name", as: String.self),
            lastName: try row.decode(column: "last_name", as: String.self),
            storefront: try row.decode(column: "storefront", as: String.self),
            settings: TesterSettings(
                interruptPurchases: try row.decode(column: "interrupt_purchases", as: Bool.self),
                askToBuy: try row.decode(column: "ask_to_buy", as: Bool.self),
                renewalRate: try row.enumeration("renewal_rate", as: RenewalRate.self),
                paymentOutcome: try row.enumeration("payment_outcome", as: PaymentOutcome.self)
            ),
            purchaseHistoryClearedAt: try row.optionalDate("purchase_history_cleared_at"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }
}
