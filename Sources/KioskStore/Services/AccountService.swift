import Foundation
import KioskCore
import KioskSigning
import KioskStorage

/// The fields of an account a caller may set; nil leaves a field as it is. The sandbox settings are a tester's
/// only (the production body has no such keys).
public struct AccountChanges: Sendable {
    public var password: String?
    public var firstName: String?
    public var lastName: String?
    public var storefront: String?
    public var paymentOutcome: PaymentOutcome?
    public var interruptPurchases: Bool?
    public var askToBuy: Bool?
    public var renewalRate: RenewalRate?

    public init(
        password: String? = nil, firstName: String? = nil, lastName: String? = nil, storefront: String? = nil,
        paymentOutcome: PaymentOutcome? = nil, interruptPurchases: Bool? = nil, askToBuy: Bool? = nil,
        renewalRate: RenewalRate? = nil
    ) {
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
        self.interruptPurchases = interruptPurchases
        self.askToBuy = askToBuy
        self.renewalRate = renewalRate
    }
}

/// The accounts of both environments: production customer accounts (`kiosk accounts`) and sandbox testers
/// (`kiosk testers`), each environment's named as its users know it.
public struct AccountService: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock

    public init(database: any KioskDatabase, clock: any KioskClock) {
        self.database = database
        self.clock = clock
    }
}

extension AccountService {
    public func createAccount(_ environment: StoreEnvironment, email: String, changes: AccountChanges)
        async throws -> Account
    {
        let email = email.lowercased()
        let words = AccountWords(environment)
        let new = try await PersonFields.forCreation(
            email: email, password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront, defaultName: words.defaultName, kind: words.kind)
        let now = clock.now()
        return try await database.transaction { tx in
            if try await tx.account(email: email, environment: environment) != nil {
                throw KioskError(
                    words.duplicateCode, "A \(words.described) with email '\(email)' already exists.", field: "email",
                    fix: words.duplicateFix)
            }
            var account = Account(
                id: UUID(), environment: environment, email: email, passwordHash: new.passwordHash,
                firstName: new.firstName, lastName: new.lastName, storefront: new.storefront.code,
                paymentOutcome: changes.paymentOutcome ?? .approve, createdAt: now, updatedAt: now)
            Self.apply(changes, toSandboxSettingsOf: &account)
            try await tx.insertAccount(account)
            return account
        }
    }

    /// How many accounts the environment has.
    public func accountCount(_ environment: StoreEnvironment) async throws -> Int {
        try await database.transaction { tx in try await tx.accountCount(environment: environment) }
    }

    /// Up to `limit` (nil: all) of the environment's accounts from `offset`, ordered by email, and how many there
    /// are.
    public func accountPage(_ environment: StoreEnvironment, offset: Int = 0, limit: Int?) async throws -> (
        accounts: [Account], total: Int
    ) {
        try await database.transaction { tx in
            (
                try await tx.accounts(environment: environment, limit: limit, offset: offset),
                try await tx.accountCount(environment: environment)
            )
        }
    }

    public func account(_ environment: StoreEnvironment, email: String) async throws -> Account {
        try await database.transaction { tx in try await Self.requireAccount(email, environment, in: tx) }
    }

    public func updateAccount(_ environment: StoreEnvironment, email: String, changes: AccountChanges)
        async throws -> Account
    {
        let fields = try await PersonFields(
            password: changes.password, firstName: changes.firstName, lastName: changes.lastName,
            storefront: changes.storefront)
        let now = clock.now()
        return try await database.transaction { tx in
            var account = try await Self.requireAccount(email, environment, in: tx)
            if let passwordHash = fields.passwordHash { account.passwordHash = passwordHash }
            if let firstName = fields.firstName { account.firstName = firstName }
            if let lastName = fields.lastName { account.lastName = lastName }
            if let storefront = fields.storefront { account.storefront = storefront.code }
            if let value = changes.paymentOutcome { account.paymentOutcome = value }
            Self.apply(changes, toSandboxSettingsOf: &account)
            account.updatedAt = now
            try await tx.updateAccount(account)
            return account
        }
    }

    public func deleteAccount(_ environment: StoreEnvironment, email: String) async throws {
        try await database.transaction { tx in
            let account = try await Self.requireAccount(email, environment, in: tx)
            try await tx.deleteAccount(id: account.id)
        }
    }

    /// Clears a sandbox tester's purchase history, as App Store Connect's "Clear Purchase History".
    public func clearPurchaseHistory(email: String) async throws -> Account {
        let now = clock.now()
        return try await database.transaction { tx in
            var tester = try await Self.requireAccount(email, .sandbox, in: tx)
            tester.sandbox?.purchaseHistoryClearedAt = now
            tester.updatedAt = now
            try await tx.updateAccount(tester)
            return tester
        }
    }

    static func requireAccount(_ email: String, _ environment: StoreEnvironment, in tx: any StorageTransaction)
        async throws -> Account
    {
        guard let account = try await tx.account(email: email.lowercased(), environment: environment) else {
            let words = AccountWords(environment)
            throw KioskError(
                words.notFoundCode, "No \(words.described) has email '\(email)'.", field: "email",
                fix: "List \(words.plural) with `kiosk \(words.command) list`, or create one with "
                    + "`kiosk \(words.command) create`.")
        }
        return account
    }

    /// A tester's settings from `changes`; production accounts have none.
    private static func apply(_ changes: AccountChanges, toSandboxSettingsOf account: inout Account) {
        guard var settings = account.sandbox else { return }
        if let value = changes.interruptPurchases { settings.interruptPurchases = value }
        if let value = changes.askToBuy { settings.askToBuy = value }
        if let value = changes.renewalRate { settings.renewalRate = value }
        account.sandbox = settings
    }
}

/// How the console speaks of an environment's accounts: sandbox testers, production customer accounts.
struct AccountWords {
    let kind: String
    let described: String
    let plural: String
    let command: String
    let defaultName: (String, String)
    let duplicateCode: ErrorCode
    let duplicateFix: String
    let notFoundCode: ErrorCode

    init(_ environment: StoreEnvironment) {
        switch environment {
        case .sandbox:
            kind = "tester"
            described = "sandbox tester"
            plural = "testers"
            command = "testers"
            defaultName = ("Test", "User")
            duplicateCode = .duplicateTesterEmail
            duplicateFix = "Each tester needs its own email; update the existing one with `kiosk testers update`."
            notFoundCode = .testerNotFound
        case .production:
            kind = "customer account"
            described = "customer account"
            plural = "accounts"
            command = "accounts"
            defaultName = ("App", "Customer")
            duplicateCode = .duplicateAccountEmail
            duplicateFix = "Each account needs its own email; update the existing one instead."
            notFoundCode = .accountNotFound
        }
    }
}
