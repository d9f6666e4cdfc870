import KioskProtocol

/// The signed-in account's country store.
public struct SKStorefront: Sendable, Hashable {
    /// ISO 3166-1 alpha-3, e.g. `USA`.
    public let countryCode: String
    /// Apple's storefront id, e.g. `143441`.
    public let identifier: String

    init(_ info: StorefrontInfo) {
        self.countryCode = info.countryCode
        self.identifier = info.identifier
    }
}
