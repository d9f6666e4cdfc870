import Foundation

/// A sandbox test user. Test users exist only in the sandbox and can never sign in to production.
public struct Tester: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    /// Stored lower-cased; unique in the store.
    public var email: String
    /// A slow password hash (see `PasswordHasher`), never the password.
    public var passwordHash: String
    public var firstName: String
    public var lastName: String
    /// Alpha-3 storefront code, e.g. `USA`.
    public var storefront: String
    public var settings: TesterSettings
    public var purchaseHistoryClearedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID, email: String, passwordHash: String, firstName: String, lastName: String, storefront: String,
        settings: TesterSettings = TesterSettings(), purchaseHistoryClearedAt: Date? = nil,
        createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.firstName = firstName
        self.lastName = lastName
        self.storefront = storefront
        self.settings = settings
        self.purchaseHistoryClearedAt = purchaseHistoryClearedAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Per-tester sandbox behaviour, as App Store Connect's sandbox account settings.
public struct TesterSettings: Codable, Sendable, Hashable {
    /// Purchases fail as interrupted until resolved through the test controls.
    public var interruptPurchases: Bool
    /// Purchases wait for a parent's approval (Ask to Buy).
    public var askToBuy: Bool
    public var renewalRate: RenewalRate
    /// What the tester's simulated payment method does with a charge.
    public var paymentOutcome: PaymentOutcome

    public init(
        interruptPurchases: Bool = false, askToBuy: Bool = false, renewalRate: RenewalRate = .monthlyEvery5Minutes,
        paymentOutcome: PaymentOutcome = .approve
    ) {
        self.interruptPurchases = interruptPurchases
        self.askToBuy = askToBuy
        self.renewalRate = renewalRate
        self.paymentOutcome = paymentOutcome
    }
}

/// How fast sandbox subscriptions renew for a tester. The name says how long a one-month period lasts;
/// other durations scale with it (Apple's sandbox table is `monthlyEvery5Minutes`).
public enum RenewalRate: String, Codable, Sendable, CaseIterable, Hashable {
    case monthlyEvery3Minutes = "3m"
    case monthlyEvery5Minutes = "5m"
    case monthlyEvery15Minutes = "15m"
    case monthlyEvery30Minutes = "30m"
    case monthlyEvery1Hour = "1h"
}
