import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Production customer accounts. Like testers: ids are lower-case UUID text, emails unique regardless of case.
extension SQLStorageTransaction {
    func insertCustomer(_ customer: CustomerAccount) async throws {
        try await session.run(
            """
            INSERT INTO customers (id, email, password_hash, first_name, last_name, storefront, payment_outcome,
                created_at, updated_at)
            VALUES (\(bind: Self.text(customer.id)), \(bind: customer.email), \(bind: customer.passwordHash),
                \(bind: customer.firstName), \(bind: customer.lastName), \(bind: customer.storefront),
                \(bind: customer.paymentOutcome.rawValue), \(bind: customer.createdAt.millisecondsSince1970),
                \(bind: customer.updatedAt.millisecondsSince1970))
            """
        )
    }

    func updateCustomer(_ customer: CustomerAccount) async throws {
        let row = try await session.first(
            """
            UPDATE customers SET email = \(bind: customer.email), password_hash = \(bind: customer.passwordHash),
                first_name = \(bind: customer.firstName), last_name = \(bind: customer.lastName),
                storefront = \(bind: customer.storefront), payment_outcome = \(bind: customer.paymentOutcome.rawValue),
                created_at = \(bind: customer.createdAt.millisecondsSince1970),
                updated_at = \(bind: customer.updatedAt.millisecondsSince1970)
            WHERE id = \(bind: Self.text(customer.id))
            RETURNING id
            """
        )
        try requireUpdated(row, "customer \(customer.id)")
    }

    func deleteCustomer(id: CustomerAccount.ID) async throws {
        try await session.run("DELETE FROM customers WHERE id = \(bind: Self.text(id))")
    }

    func customer(id: CustomerAccount.ID) async throws -> CustomerAccount? {
        try await session.first("SELECT * FROM customers WHERE id = \(bind: Self.text(id))").map(Self.decodeCustomer)
    }

    func customer(email: String) async throws -> CustomerAccount? {
        try await session.first("SELECT * FROM customers WHERE lower(email) = \(bind: email.lowercased())")
            .map(Self.decodeCustomer)
    }

    func customers() async throws -> [CustomerAccount] {
        try await session.all("SELECT * FROM customers ORDER BY email").map(Self.decodeCustomer)
            .sorted { $0.email < $1.email }
    }

    private static func decodeCustomer(_ row: any SQLRow) throws -> CustomerAccount {
        CustomerAccount(
            id: try row.uuid("id"),
            email: try row.decode(column: "email", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            firstName: try row.decode(column: "first_name", as: String.self),
            lastName: try row.decode(column: "last_name", as: String.self),
            storefront: try row.decode(column: "storefront", as: String.self),
            paymentOutcome: try row.enumeration("payment_outcome", as: PaymentOutcome.self),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }
}
