/// The four kinds of in-app purchase App Store Connect offers.
public enum ProductType: String, Codable, Sendable, CaseIterable, Hashable, NamedValues {
    case consumable
    case nonConsumable = "non_consumable"
    case autoRenewable = "auto_renewable"
    case nonRenewing = "non_renewing"

    /// The spelling of `type` in Apple's signed transactions (`JWSTransactionDecodedPayload.type`).
    public var appleName: String {
        switch self {
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        case .autoRenewable: "Auto-Renewable Subscription"
        case .nonRenewing: "Non-Renewing Subscription"
        }
    }
}
