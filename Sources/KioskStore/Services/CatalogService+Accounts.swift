import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// The fields of a production customer account a caller may set; nil leaves a field as it is.
public struct AccountChanges: Sendable {
    public var password: String?
    public var firstName: String?
    public var lastName: String?
    public var storefront: String?
    public var paymentOutcome: PaymentOutcome?

    public init(
        password: String? = nil, firstName: String? = nil, lastName: String? = nil, storefront: String? = nil,
        paymentOutcome: PaymentOutcome? = nil
    ) {
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
    }
}

/// Production customer accounts: the people who buy in the production store.
extension CatalogService {
    public func createAccount(email: String, changes: AccountChanges) async throws -> CustomerAccount {
        let email = email.lowercased()
        let new = try await PersonFields.forCreation(
            email: email, password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront, defaultName: ("App", "Customer"), kind: "customer account")
        let now = clock.now()
        return try await database.transaction { tx in
            if try await tx.customer(email: email) != nil {
                throw KioskError.conflict(
                    "duplicate_account_email", "A customer account with email '\(email)' already exists.",
                    field: "email", fix: "Each account needs its own email; update the existing one instead.")
            }
            let account = CustomerAccount(
                id: UUID(), email: email, passwordHash: new.passwordHash, firstName: new.firstName,
                lastName: new.lastName,
                storefront: new.storefront.code, paymentOutcome: changes.paymentOutcome ?? .approve, createdAt: now,
                updatedAt: now)
            try await tx.insertCustomer(account)
            return account
        }
    }

    public func accounts() async throws -> [CustomerAccount] {
        try await database.transaction { tx in try await tx.customers() }
    }

    public func account(email: String) async throws -> CustomerAccount {
        try await database.transaction { tx in try await Self.requireAccount(email, in: tx) }
    }

    public func updateAccount(email: String, changes: AccountChanges) async throws -> CustomerAccount {
        let fields = try await PersonFields(
            password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront)
        let now = clock.now()
        return try await database.transaction { tx in
            var account = try await Self.requireAccount(email, in: tx)
            if let passwordHash = fields.passwordHash { account.passwordHash = passwordHash }
            if let firstName = fields.firstName { account.firstName = firstName }
            if let lastName = fields.lastName { account.lastName = lastName }
            if let storefront = fields.storefront { account.storefront = storefront.code }
            if let value = changes.paymentOutcome { account.paymentOutcome = value }
            account.updatedAt = now
            try await tx.updateCustomer(account)
            return account
        }
    }

    public func deleteAccount(email: String) async throws {
        try await database.transaction { tx in
            let account = try await Self.requireAccount(email, in: tx)
            try await tx.deleteCustomer(id: account.id)
        }
    }

    static func requireAccount(_ email: String, in tx: any StorageTransaction) async throws -> CustomerAccount {
        guard let account = try await tx.customer(email: email.lowercased()) else {
            throw KioskError.notFound(
                "account_not_found", "No customer account has email '\(email)'.", field: "email",
                fix: "List accounts with `kiosk accounts list`, or create one with `kiosk accounts create`.")
        }
        return account
    }
}
