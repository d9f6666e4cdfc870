import Foundation

/// Someone who buys: a production customer account (an Apple ID in the real store) or a sandbox tester (App Store
/// Connect's sandbox account), told apart by `environment`. Created through the console; an account signs in to its
/// own environment only, never the other.
public struct Account: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var environment: StoreEnvironment
    /// Stored lower-cased; unique within the environment.
    public var email: String
    /// A slow password hash (see `PasswordHasher`), never the password.
    public var passwordHash: String
    public var firstName: String
    public var lastName: String
    /// Alpha-3 storefront code, e.g. `USA`.
    public var storefront: String
    /// What the account's simulated payment method does with a charge.
    public var paymentOutcome: PaymentOutcome
    /// A sandbox tester's settings; nil in production.
    public var sandbox: SandboxSettings?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID, environment: StoreEnvironment, email: String, passwordHash: String, firstName: String,
        lastName: String, storefront: String, paymentOutcome: PaymentOutcome = .approve,
        sandbox: SandboxSettings? = nil, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.environment = environment
        self.email = email
        self.passwordHash = passwordHash
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
        self.sandbox = environment == .sandbox ? sandbox ?? SandboxSettings() : nil
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A sandbox tester's behaviour, as App Store Connect's sandbox account settings.
public struct SandboxSettings: Codable, Sendable, Hashable {
    /// Purchases fail as interrupted until resolved through the test controls.
    public var interruptPurchases: Bool
    /// Purchases wait for a parent's approval (Ask to Buy).
    public var askToBuy: Bool
    public var renewalRate: RenewalRate
    /// Transactions before this instant are hidden ("Clear Purchase History").
    public var purchaseHistoryClearedAt: Date?

    public init(
        interruptPurchases: Bool = false, askToBuy: Bool = false, renewalRate: RenewalRate = .monthlyEvery5Minutes,
        purchaseHistoryClearedAt: Date? = nil
    ) {
        self.interruptPurchases = interruptPurchases
        self.askToBuy = askToBuy
        self.renewalRate = renewalRate
        self.purchaseHistoryClearedAt = purchaseHistoryClearedAt
    }
}

/// What the simulated payment method of an account does with the next charge.
public enum PaymentOutcome: String, Codable, Sendable, CaseIterable, Hashable {
    /// The charge succeeds.
    case approve
    /// The card is declined: `failed` with `SKError.paymentNotAllowed`.
    case decline
    /// Not enough funds: `failed` with `SKError.paymentInvalid`.
    case insufficientFunds = "insufficient_funds"
}

/// Whoever signed in: a production customer or a sandbox tester, seen the same way by the purchase flow.
public struct StoreAccount: Sendable, Hashable {
    public var environment: StoreEnvironment
    public var id: UUID
    public var email: String
    public var storefront: String
    public var paymentOutcome: PaymentOutcome
    /// Ask to Buy (sandbox testers only).
    public var askToBuy: Bool
    /// Interrupted purchases (sandbox testers only).
    public var interruptPurchases: Bool
    /// Transactions before this instant are hidden (a tester's "clear purchase history").
    public var historyClearedAt: Date?
    /// How fast the tester's subscriptions renew (sandbox testers only).
    public var renewalRate: RenewalRate

    public init(
        environment: StoreEnvironment, id: UUID, email: String, storefront: String, paymentOutcome: PaymentOutcome,
        askToBuy: Bool = false, interruptPurchases: Bool = false, historyClearedAt: Date? = nil,
        renewalRate: RenewalRate = .monthlyEvery5Minutes
    ) {
        self.environment = environment
        self.id = id
        self.email = email
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
        self.askToBuy = askToBuy
        self.interruptPurchases = interruptPurchases
        self.historyClearedAt = historyClearedAt
        self.renewalRate = renewalRate
    }

    public init(_ account: Account) {
        self.init(
            environment: account.environment, id: account.id, email: account.email, storefront: account.storefront,
            paymentOutcome: account.paymentOutcome, askToBuy: account.sandbox?.askToBuy ?? false,
            interruptPurchases: account.sandbox?.interruptPurchases ?? false,
            historyClearedAt: account.sandbox?.purchaseHistoryClearedAt,
            renewalRate: account.sandbox?.renewalRate ?? .monthlyEvery5Minutes)
    }

    /// The timing rules of the account's subscriptions: its environment's, at its renewal rate in the sandbox.
    public var renewalRules: RenewalRules { RenewalRules(environment: environment, rate: renewalRate) }
}

/// A signed-in session of one account on one device for one app.
public struct StoreSession: Codable, Sendable, Hashable {
    /// SHA-256 hex of the bearer token; the token itself is never stored.
    public var tokenHash: String
    public var environment: StoreEnvironment
    public var accountId: UUID
    public var appId: App.ID
    /// The device's `identifierForVendor`; it feeds the app receipt's hash.
    public var deviceId: UUID
    public var createdAt: Date

    public init(
        tokenHash: String, environment: StoreEnvironment, accountId: UUID, appId: App.ID, deviceId: UUID,
        createdAt: Date
    ) {
        self.tokenHash = tokenHash
        self.environment = environment
        self.accountId = accountId
        self.appId = appId
        self.deviceId = deviceId
        self.createdAt = createdAt
    }
}
