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
        try CatalogRules.validateEmail(email, field: "email")
        guard let password = changes.password else {
            throw KioskError.invalid("missing_field", "An account needs a password.", field: "password", fix: "Add 'password'.")
        }
        try CatalogRules.validatePassword(password, field: "password")
        let storefront = try CatalogRules.requireStorefront(changes.storefront ?? "USA", field: "storefront")
        let firstName = changes.firstName ?? "App"
        let lastName = changes.lastName ?? "Customer"
        try CatalogRules.validateName(firstName, field: "firstName")
        try CatalogRules.validateName(lastName, field: "lastName")
        let passwordHash = try PasswordHasher().hash(password)
        let now = clock.now()
        return try await database.transaction { tx in
            if try await tx.customer(email: email) != nil {
                throw KioskError.conflict(
                    "duplicate_account_email", "A customer account with email '\(email)' already exists.",
                    field: "email", fix: "Each account needs its own email; update the existing one instead.")
            }
            let account = CustomerAccount(
                id: UUID(), email: email, passwordHash: passwordHash, firstName: firstName, lastName: lastName,
                storefront: storefront.code, paymentOutcome: changes.paymentOutcome ?? .approve, createdAt: now,
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
        if let password = changes.password { try CatalogRules.validatePassword(password, field: "password") }
        if let firstName = changes.firstName { try CatalogRules.validateName(firstName, field: "firstName") }
        if let lastName = changes.lastName { try CatalogRules.validateName(lastName, field: "lastName") }
        let storefront = try changes.storefront.map { try CatalogRules.requireStorefront($0, field: "storefront") }
        let passwordHash = try changes.password.map { try PasswordHasher().hash($0) }
        let now = clock.now()
        return try await database.transaction { tx in
            var account = try await Self.requireAccount(email, in: tx)
            if let passwordHash { account.passwordHash = passwordHash }
            if let firstName = changes.firstName { account.firstName = firstName }
            if let lastName = changes.lastName { account.lastName = lastName }
            if let storefront { account.storefront = storefront.code }
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
