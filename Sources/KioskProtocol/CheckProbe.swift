import Foundation

/// What a developer's server answers `kiosk check` at `GET {probe}/{appAccountToken}?now=MILLISECONDS`: what the
/// user the token names holds at `now` (the store's sandbox clock, which runs ahead of the real one). The contract
/// is documented in docs/check.md; Kiosk's merchant serves it at ``MerchantPaths/adminProbe(appAccountToken:)``.
public struct CheckProbe: Codable, Sendable, Hashable {
    /// The names of the entitlements active at `now` (or the product ids, as the check file names them).
    public var entitlements: [String]
    /// Every balance the user has, in whole units (coins).
    public var balances: [String: Int64]

    public init(entitlements: [String], balances: [String: Int64]) {
        self.entitlements = entitlements
        self.balances = balances
    }
}
