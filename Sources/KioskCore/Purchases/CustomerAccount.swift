import Foundation

/// A production customer account (an Apple ID in the real store). Created through the console; it can never
/// sign in to the sandbox, just as a sandbox tester can never sign in to production.
public struct CustomerAccount: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    /// Stored lower-cased; unique among customer accounts.
    public var email: String
    /// A slow password hash (see `PasswordHasher`), never the password.
    public var passwordHash: String
    public var firstName: String
    public var lastName: String
    /// Alpha-3 storefront code, e.g. `USA`.
    public var storefront: String
    public var paymentOutcome: PaymentOutcome
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID, email: String, passwordHash: String, firstName: String, lastName: String, storefront: String,
        paymentOutcome: PaymentOutcome = .approve, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
        self.createdAt = createdAt
        self.updatedAt = updatedAt
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

    public init(
        environment: StoreEnvironment, id: UUID, email: String, storefront: String, paymentOutcome: PaymentOutcome,
        askToBuy: Bool = false, interruptPurchases: Bool = false, historyClearedAt: Date? = nil
    ) {
        self.environment = environment
        self.id = id
        self.email = email
        self.storefront = storefront
        self.paymentOutcome = paymentOutcome
        self.askToBuy = askToBuy
        self.interruptPurchases = interruptPurchases
        self.historyClearedAt = historyClearedAt
    }

    public init(customer: CustomerAccount) {
        self.init(
            environment: .production, id: customer.id, email: customer.email, storefront: customer.storefront,
            paymentOutcome: customer.paymentOutcome)
    }

    public init(tester: Tester) {
        self.init(
            environment: .sandbox, id: tester.id, email: tester.email, storefront: tester.storefront,
            paymentOutcome: tester.settings.paymentOutcome, askToBuy: tester.settings.askToBuy,
            interruptPurchases: tester.settings.interruptPurchases, historyClearedAt: tester.purchaseHistoryClearedAt)
    }
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
