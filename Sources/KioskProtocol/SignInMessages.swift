import Foundation

/// Signs an account in on one device for one app. Production accepts customer accounts, the sandbox only
/// sandbox testers.
public struct SignInRequest: Codable, Sendable, Hashable {
    public var email: String
    public var password: String
    /// The app's bundle id; the session is bound to it.
    public var bundleId: String
    /// The device's id (`identifierForVendor`); it goes into the app receipt's hash.
    public var deviceId: UUID

    public init(email: String, password: String, bundleId: String, deviceId: UUID) {
        self.email = email
        self.password = password
        self.bundleId = bundleId
        self.deviceId = deviceId
    }
}

/// A signed-in session.
public struct SignInResponse: Codable, Sendable, Hashable {
    /// Bearer token for every later call; shown once, stored by the store only as a hash.
    public var sessionToken: String
    /// `Production` or `Sandbox`.
    public var environment: String
    public var account: AccountInfo
    public var storefront: StorefrontInfo

    public init(sessionToken: String, environment: String, account: AccountInfo, storefront: StorefrontInfo) {
        self.sessionToken = sessionToken
        self.environment = environment
        self.account = account
        self.storefront = storefront
    }
}

/// The signed-in account as the client sees it.
public struct AccountInfo: Codable, Sendable, Hashable {
    public var id: UUID
    public var email: String

    public init(id: UUID, email: String) {
        self.id = id
        self.email = email
    }
}

/// `SKStorefront`: the account's country store.
public struct StorefrontInfo: Codable, Sendable, Hashable {
    /// ISO 3166-1 alpha-3, e.g. `USA` (`SKStorefront.countryCode`).
    public var countryCode: String
    /// Apple's numeric id as a string, e.g. `143441` (`SKStorefront.identifier`).
    public var identifier: String
    /// ISO 4217 currency code.
    public var currency: String
    /// Locale identifier the storefront formats prices with, e.g. `en_US@currency=USD`.
    public var locale: String

    public init(countryCode: String, identifier: String, currency: String, locale: String) {
        self.countryCode = countryCode
        self.identifier = identifier
        self.currency = currency
        self.locale = locale
    }
}
