import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// The fields of a sandbox tester a caller may set; nil leaves a field as it is.
public struct TesterChanges: Sendable {
    public var password: String?
    public var firstName: String?
    public var lastName: String?
    public var storefront: String?
    public var interruptPurchases: Bool?
    public var askToBuy: Bool?
    public var renewalRate: RenewalRate?
    public var paymentOutcome: PaymentOutcome?

    public init(
        password: String? = nil, firstName: String? = nil, lastName: String? = nil, storefront: String? = nil,
        interruptPurchases: Bool? = nil, askToBuy: Bool? = nil, renewalRate: RenewalRate? = nil,
        paymentOutcome: PaymentOutcome? = nil
    ) {
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.interruptPurchases = interruptPurchases
        self.askToBuy = askToBuy
        self.renewalRate = renewalRate
        self.paymentOutcome = paymentOutcome
    }
}

extension CatalogService {
    public func createTester(email: String, changes: TesterChanges) async throws -> Tester {
        let email = email.lowercased()
        let new = try await PersonFields.forCreation(
            email: email, password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront, defaultName: ("Test", "User"), kind: "tester")
        let now = clock.now()
        let settings = TesterSettings(
            interruptPurchases: changes.interruptPurchases ?? false, askToBuy: changes.askToBuy ?? false,
            renewalRate: changes.renewalRate ?? .monthlyEvery5Minutes,
            paymentOutcome: changes.paymentOutcome ?? .approve)
        return try await database.transaction { tx in
            if try await tx.tester(email: email) != nil {
                throw KioskError.conflict(
                    "duplicate_tester_email", "A sandbox tester with email '\(email)' already exists.", field: "email",
                    fix: "Each tester needs its own email; update the existing one with `kiosk testers update`.")
            }
            let tester = Tester(
                id: UUID(), email: email, passwordHash: new.passwordHash, firstName: new.firstName,
                lastName: new.lastName,
                storefront: new.storefront.code, settings: settings, createdAt: now, updatedAt: now)
            try await tx.insertTester(tester)
            return tester
        }
    }

    public func testers() async throws -> [Tester] {
        try await database.transaction { tx in try await tx.testers() }
    }

    public func tester(email: String) async throws -> Tester {
        try await database.transaction { tx in try await Self.requireTester(email, in: tx) }
    }

    public func updateTester(email: String, changes: TesterChanges) async throws -> Tester {
        let fields = try await PersonFields(
            password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront)
        let now = clock.now()
        return try await database.transaction { tx in
            var tester = try await Self.requireTester(email, in: tx)
            if let passwordHash = fields.passwordHash { tester.passwordHash = passwordHash }
            if let firstName = fields.firstName { tester.firstName = firstName }
            if let lastName = fields.lastName { tester.lastName = lastName }
            if let storefront = fields.storefront { tester.storefront = storefront.code }
            if let value = changes.interruptPurchases { tester.settings.interruptPurchases = value }
            if let value = changes.askToBuy { tester.settings.askToBuy = value }
            if let value = changes.renewalRate { tester.settings.renewalRate = value }
            if let value = changes.paymentOutcome { tester.settings.paymentOutcome = value }
            tester.updatedAt = now
            try await tx.updateTester(tester)
            return tester
        }
    }

    public func deleteTester(email: String) async throws {
        try await database.transaction { tx in
            let tester = try await Self.requireTester(email, in: tx)
            try await tx.deleteTester(id: tester.id)
        }
    }

    /// Clears the tester's purchase history, as App Store Connect's "Clear Purchase History".
    public func clearPurchaseHistory(email: String) async throws -> Tester {
        let now = clock.now()
        return try await database.transaction { tx in
            var tester = try await Self.requireTester(email, in: tx)
            tester.purchaseHistoryClearedAt = now
            tester.updatedAt = now
            try await tx.updateTester(tester)
            return tester
        }
    }

    static func requireTester(_ email: String, in tx: any StorageTransaction) async throws -> Tester {
        guard let tester = try await tx.tester(email: email.lowercased()) else {
            throw KioskError.notFound(
                "tester_not_found", "No sandbox tester has email '\(email)'.", field: "email",
                fix: "List testers with `kiosk testers list`, or create one with `kiosk testers create`.")
        }
        return tester
    }
}
